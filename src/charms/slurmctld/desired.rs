//! The controller's desired files, from the store alone (pure: same store and settings,
//! byte-identical output). Three steps, in order:
//!
//! 1. **admit**: each relation's partition parsed, partition and node names settled first-come
//!    ([`settle`], [`settle_flagged`]); a unit or application left out gets its verdict;
//! 2. **fold**: accepted nodes sorted by name, nodes of one record share a hostlist line, nodes
//!    of one GRES list share gres.conf lines;
//! 3. **render**: slurm.conf's head from the config (checked as the model renderer checks it),
//!    then each record's lines, rendered once when the record arrived
//!    ([`super::store::Record`]), the partitions and `DownNodes`; gres.conf likewise.
//!
//! The output equals the model renderer's ([`crate::slurm::render_files`]) for the same nodes:
//! `tests/charm_store_render.rs` checks it over random clusters.
//!
//! # Owners
//!
//! Names owned first-come: a node name belongs to the unit that claimed it first, a partition
//! name to the application that published it first. Ownership lives in the relation cache (a
//! flag on each unit's entry, a table of partition names), so
//! who came first never depends on the order of relation ids as strings (`"slurmd:10"` sorts
//! before `"slurmd:2"`) or of application names: a later claim on an owned name is rejected
//! for the newcomer alone. A name is released when its owner no longer claims it (the unit or
//! relation left, or it now publishes another name); claims that arrive in the same hook are
//! ordered by relation id as a number, then by unit number. A full rebuild of the cache
//! (leader elected, charm upgraded) keeps the owners the loaded store had
//! ([`super::store::Store::keep_ownership_of`]).

use super::store::{
    Applied, Entry, Gres, OVERSIZED_MARK, Owners, Record, Relation, Shape, Store, bounded, checksum,
};
use crate::charms::common::NameMap;
use crate::interface::{AuthKind, InterfaceError, PartitionRecord, Verdicts};
use crate::slurm::hostlist::{compress, natural_cmp, natural_key, sort_naturally};
use crate::slurm::node_lines::{defaults_apply, push_node_lines};
use crate::slurm::render::{
    HEADER, push_down_nodes_line, push_partition_line, render_slurm_conf_head,
};
use crate::slurm::types::{NodeName, VocabError};
use crate::slurm::{
    GlobalKey, NodeState, ParseError, SlurmConf, check_max_node_count, parse_global_overrides,
};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::collections::HashSet;

/// cgroup.conf: jobs see only the GPUs and cores they were given (as the reference charm), and
/// only their memory: the nodes send `MemSpecLimit`, which Slurm 24.11+ reports as "Limited
/// MemSpecLimit support" (an error in slurmd.log) unless `ConstrainRAMSpace=yes`.
pub const CGROUP_CONF_TEXT: &str = "# Written by the slurmctld charm; manual changes are overwritten.\n\
ConstrainCores=yes\n\
ConstrainDevices=yes\n\
ConstrainRAMSpace=yes\n";

/// `DownNodes` reason for nodes that are new (until `node-configured`).
pub const NEW_NODE_REASON: &str = "New node.";

/// Config and facts the rendering depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `cluster-name`.
    pub cluster_name: String,
    /// `default-partition` (empty: none).
    pub default_partition: String,
    /// `slurm-conf-parameters` (Key=Value, lines or spaces).
    pub slurm_conf_parameters: String,
    /// This controller's host name (`SlurmctldHost`, the nodes' `--conf-server`), read once at
    /// observe; a name Slurm refuses blocks the leader and renders nothing.
    pub hostname: Result<NodeName, VocabError>,
    /// `auth-type`: `AuthType`/`CredType` munge (default) or slurm.
    pub auth: AuthKind,
    /// `health-check-interval` and `health-check-node-state`, checked (an error blocks the
    /// leader with its text and renders nothing).
    pub health_check: Result<crate::slurm::HealthCheck, crate::slurm::HealthCheckError>,
    /// `default-mem-per-cpu` and `default-mem-per-gpu`, checked (an error blocks the leader
    /// with its text and renders nothing): `DefMemPerCPU`/`DefMemPerGPU`, derived from the
    /// nodes by default ([`crate::slurm::DefaultMemory`]).
    pub default_memory: Result<crate::slurm::DefaultMemory, crate::slurm::DefaultMemoryError>,
    /// The installed slurmctld serves OpenMetrics (Slurm 25.11+): `MetricsType` is written
    /// ([`crate::slurm::openmetrics`]).
    pub openmetrics: bool,
    /// The other controller units and where the state is kept (what a leader change needs).
    pub controllers: Controllers,
}

/// What slurm.conf says so that another unit can take over when leadership moves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Controllers {
    /// The other slurmctld units' host names, `SlurmctldHost` lines after this leader's
    /// ([`super::leadership`]: they run no slurmctld, but a job's slurmstepd reaches the next leader
    /// through them).
    pub others: Vec<String>,
    /// `StateSaveLocation` from `state-save-location` (shared storage, checked by
    /// [`super::leadership`]); `None`: the leader's local disk, the charm's default.
    pub state_save_location: Option<String>,
}

/// The rendered result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// slurm.conf text (None when rendering failed).
    pub slurm_conf: Option<String>,
    /// gres.conf text.
    pub gres_conf: Option<String>,
    /// Why rendering failed (the old files stay): the blocked status's text.
    pub render_error: Option<String>,
    /// Units (or applications) left out, with the reason.
    pub rejected: Vec<(String, String)>,
    /// Applications whose nodes wait for their `partition` record.
    pub waiting_apps: Vec<String>,
    /// What slurmctld will have once applied.
    pub applied: Applied,
    /// The XXH3-64 of each rendered file, what the plan compares with the files on disk.
    pub digests: FileDigests,
    /// Who owns which partition name after this hook (first come), and the sticky default.
    pub owners: Owners,
    /// Units whose ownership of the name they publish changes: (relation id, unit, owns).
    pub owner_changes: Vec<(u32, String, bool)>,
    /// Per relation id: the units left out and why, to publish as `verdicts`.
    pub verdicts: BTreeMap<u32, Verdicts>,
    /// `default-partition` when it names no partition (a warning in the status).
    pub default_missing: Option<String>,
    /// How many nodes are in the files.
    pub node_count: usize,
    /// How many GRES those nodes declare.
    pub gres_count: u64,
}

impl Plan {
    /// What the status appends about left-out units and waiting applications:
    /// `; 2 rejected (gpu/3, gpu/7): gpu/3: <reason>; waiting for partition from x`.
    pub fn problems(&self) -> String {
        let mut msg = String::new();
        if let Some((who, why)) = self.rejected.first() {
            let n = self.rejected.len();
            let names: Vec<&str> = self
                .rejected
                .iter()
                .take(5)
                .map(|(w, _)| w.as_str())
                .collect();
            let more = if n > 5 { ", …" } else { "" };
            msg.push_str(&format!(
                "; {n} rejected ({}{more}): {who}: {why}",
                names.join(", ")
            ));
        }
        if let Some(name) = &self.default_missing {
            msg.push_str(&format!("; default-partition {name} names no partition"));
        }
        if !self.waiting_apps.is_empty() {
            msg.push_str(&format!(
                "; waiting for partition from {}",
                self.waiting_apps.join(",")
            ));
        }
        msg
    }
}

/// Why an application's `partition` value is refused: every unit of the application is left
/// out, with this error's text in its verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartitionError {
    /// The value was over the size limit (only its size was kept), or is not a valid
    /// `partition` record (the message names the size and what to shorten, or the field and
    /// the rule).
    #[error(transparent)]
    Record(#[from] InterfaceError),
}

/// Why `slurm-conf-parameters` cannot be applied: the leader blocks with it and writes no
/// files until the option is fixed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParametersError {
    /// The text is not `Key=Value` by Slurm's rules, sets a key the charm owns, or a value
    /// is refused for its key.
    #[error("config option `slurm-conf-parameters`: {0}")]
    Parse(#[from] ParseError),
}

/// Applies `slurm-conf-parameters` (`Key=Value` pairs, no charm-owned keys:
/// [`crate::slurm::parse_global_overrides`]) to the model.
pub fn apply_parameters(conf: &mut SlurmConf, text: &str) -> Result<(), ParametersError> {
    for pair in parse_global_overrides(text)? {
        conf.set_override(&pair);
    }
    Ok(())
}

fn parse_partition(raw: &str) -> Result<PartitionRecord, PartitionError> {
    if let Some(len) = raw.strip_prefix(OVERSIZED_MARK) {
        return Err(InterfaceError::TooLarge {
            key: "partition",
            len: len.parse().unwrap_or_default(),
        }
        .into());
    }
    Ok(PartitionRecord::from_relation_value(raw)?)
}

/// One node that made it into the files.
struct Accepted<'s> {
    name: &'s str,
    record: &'s Record,
    /// Its record's node line shape.
    shape: &'s Shape,
    /// Its record's GRES.
    gres: &'s Gres,
    /// Its record's place among the store's records (nodes of one record share a line).
    place: usize,
    new_node: bool,
}

/// Left-out units and applications, with their verdicts.
#[derive(Default)]
struct Rejections {
    rejected: Vec<(String, String)>,
    verdicts: BTreeMap<u32, Verdicts>,
}

/// Reasons are cut to [`super::store::MAX_REASON_LEN`] bytes here, where they are recorded:
/// they are logged, kept in the store ([`Store::logged`]) and shown in the status, and a
/// refusal can quote what another application sent (a 64 KiB partition name).
impl Rejections {
    fn unit(&mut self, relation: u32, unit: &str, why: String) {
        let why = bounded(why);
        self.verdicts
            .entry(relation)
            .or_default()
            .0
            .insert(unit.to_owned(), why.clone());
        self.rejected.push((unit.to_owned(), why));
    }

    fn app(&mut self, relation: u32, rel: &Relation, why: String) {
        let why = bounded(why);
        let v = self.verdicts.entry(relation).or_default();
        for unit in rel.units.keys() {
            v.0.insert(unit.to_string(), format!("application {}: {why}", rel.app));
        }
        self.rejected.push((rel.app.clone(), why));
    }
}

/// Renders the files from the store (see the module doc).
pub fn plan(settings: &Settings, store: &Store) -> Plan {
    let Admitted {
        accepted,
        partitions,
        out,
        waiting_apps,
        owners,
        owner_changes,
        default_missing,
    } = admit(settings, store);
    // 2. fold and 3. render
    let rendered = render(settings, &accepted, store.records.len(), &partitions);
    let (slurm_conf, gres_conf, render_error) = match rendered {
        Ok((s, g)) => (Some(s), Some(g), None),
        Err(e) => (None, None, Some(e)),
    };
    let (applied, digests) = applied(
        &accepted,
        slurm_conf.as_deref().unwrap_or_default(),
        gres_conf.as_deref().unwrap_or_default(),
    );
    Plan {
        node_count: accepted.len(),
        gres_count: accepted.iter().map(|a| a.gres.count).sum(),
        slurm_conf,
        gres_conf,
        render_error,
        rejected: out.rejected,
        waiting_apps,
        applied,
        digests,
        owners,
        owner_changes,
        verdicts: out.verdicts,
        default_missing,
    }
}

/// Step 1, admit: who made it into the files, and who is left out and why. What it gathers
/// on the way (the claims, their owners, each relation's units in order) is dropped when it
/// returns, before the files are rendered.
struct Admitted<'s> {
    /// The accepted nodes, in natural name order.
    accepted: Vec<Accepted<'s>>,
    /// Each partition with the accepted nodes it names, in natural order of partition names.
    partitions: Vec<(crate::slurm::Partition, Vec<&'s str>)>,
    /// Left-out units and applications.
    out: Rejections,
    /// [`Plan::waiting_apps`].
    waiting_apps: Vec<String>,
    /// [`Plan::owners`].
    owners: Owners,
    /// [`Plan::owner_changes`].
    owner_changes: Vec<(u32, String, bool)>,
    /// [`Plan::default_missing`].
    default_missing: Option<String>,
}

/// Admits nodes and partitions first come ([`Admitted`]).
fn admit<'s>(settings: &Settings, store: &'s Store) -> Admitted<'s> {
    let mut out = Rejections::default();
    let mut waiting_apps = Vec::new();
    // relations in arrival order: by relation id as a number
    let rels: Vec<(u32, &Relation)> = store.relations.iter().map(|(k, r)| (*k, r)).collect();
    let parsed: Vec<Option<Result<PartitionRecord, PartitionError>>> = rels
        .iter()
        .map(|(_, r)| r.partition.as_deref().map(parse_partition))
        .collect();
    // 1. admit: partition names first come, then node names first come
    let partition_claims: Vec<(&str, &str)> = rels
        .iter()
        .zip(&parsed)
        .filter_map(|((_, r), p)| match p {
            Some(Ok(p)) => Some((p.name().as_str(), r.app.as_str())),
            _ => None,
        })
        .collect();
    let previous = store
        .owners
        .partitions
        .iter()
        .map(|(n, o)| (n.as_str(), o.as_str()));
    let partition_owners: BTreeMap<String, String> = settle(previous, &partition_claims)
        .into_iter()
        .map(|(n, o)| (n.to_owned(), o.to_owned()))
        .collect();
    // each relation's units in natural order (unit number)
    let sorted_units: Vec<Vec<(&str, &super::store::Unit)>> = rels
        .iter()
        .map(|(_, r)| {
            let mut units: Vec<_> = r.units.iter().map(|(n, u)| (n.as_str(), u)).collect();
            sort_naturally(&mut units, |&(unit, _)| unit);
            units
        })
        .collect();
    // room for every unit's claim at once (grown by doubling, 10,000 claims were copied
    // about twice over)
    let mut node_claims: Vec<(&str, &str, bool)> =
        Vec::with_capacity(sorted_units.iter().map(Vec::len).sum());
    // each relation's claims, as a range of `node_claims` (empty where its partition is not its)
    let mut claims_of: Vec<std::ops::Range<usize>> = Vec::with_capacity(rels.len());
    for (((_, r), p), units) in rels.iter().zip(&parsed).zip(&sorted_units) {
        let start = node_claims.len();
        let owned =
            matches!(p, Some(Ok(p)) if partition_owners.get(p.name().as_str()) == Some(&r.app));
        if owned {
            for &(unit, u) in units {
                if matches!(u.entry, Entry::Record(_)) {
                    node_claims.push((u.name.as_str(), unit, u.owner));
                }
            }
        }
        claims_of.push(start..node_claims.len());
    }
    let settled = settle_flagged(&node_claims);
    let mut owner_changes = Vec::new();
    // each accepted node at its claim's place, so that the claims' natural order orders them
    let mut accepted_at: Vec<Option<Accepted<'_>>> = (0..node_claims.len()).map(|_| None).collect();
    let mut partitions = Vec::new();
    for ((((id, rel), parsed), units), claims) in
        rels.iter().zip(parsed).zip(&sorted_units).zip(claims_of)
    {
        // the owner of each of this relation's claims, in unit order
        let owners = settled.owners.get(claims.clone()).unwrap_or_default();
        let mut claim = owners.iter();
        for &(unit, u) in units {
            let owns = matches!(u.entry, Entry::Record(_))
                && claim.next().is_some_and(|owner| *owner == unit);
            if owns != u.owner {
                owner_changes.push((*id, unit.to_owned(), owns));
            }
        }
        let partition = match parsed {
            None => {
                if !rel.units.is_empty() {
                    waiting_apps.push(rel.app.clone());
                }
                continue;
            }
            Some(Ok(p)) => p,
            Some(Err(e)) => {
                out.app(*id, rel, e.to_string());
                continue;
            }
        };
        // one partition name, one application: the first to publish it keeps it
        match partition_owners.get(partition.name().as_str()) {
            Some(owner) if *owner != rel.app => {
                let why = format!(
                    "partition {} is already published by application {owner} (it published it first)",
                    partition.name()
                );
                out.app(*id, rel, why);
                continue;
            }
            _ => {}
        }
        let mut names: Vec<&str> = Vec::with_capacity(units.len());
        let mut claim = owners.iter().zip(claims);
        for &(unit, u) in units {
            // a unit with a record claimed its name (in this relation's order)
            let (owner, at) = match &u.entry {
                Entry::Record(_) => claim.next().map(|(o, at)| (*o, at)).unzip(),
                Entry::Rejected(_) => (None, None),
            };
            let record = match &u.entry {
                Entry::Rejected(why) => {
                    out.unit(*id, unit, why.clone());
                    continue;
                }
                Entry::Record(r) => match store.record(*r) {
                    Some(record) => record,
                    None => {
                        let why = "stored record is missing (please report this charm bug)";
                        out.unit(*id, unit, why.to_owned());
                        continue;
                    }
                },
            };
            match owner {
                Some(owner) if owner == unit => {}
                Some(owner) => {
                    let why = format!(
                        "NodeName {} is already used by {owner} (it claimed it first)",
                        u.name
                    );
                    out.unit(*id, unit, why);
                    continue;
                }
                None => {
                    let why = format!(
                        "NodeName {} was not claimed (please report this charm bug)",
                        u.name
                    );
                    out.unit(*id, unit, why);
                    continue;
                }
            }
            if let Some(place) = at.and_then(|at| accepted_at.get_mut(at)) {
                *place = Some(Accepted {
                    name: &u.name,
                    record: record.record,
                    shape: record.shape,
                    gres: record.gres,
                    place: record.place,
                    new_node: u.new_node,
                });
            }
            names.push(&u.name);
        }
        let mut part = partition.partition().clone();
        part.default = !settings.default_partition.is_empty()
            && part.name.as_str() == settings.default_partition;
        if !names.is_empty() || !part.nodes.is_empty() {
            partitions.push((part, names));
        }
    }
    partitions.sort_by(|a, b| natural_cmp(&a.0.name, &b.0.name));
    // Without `default-partition`, the first partition by name is the default, so jobs
    // submitted without `-p` run; once chosen it stays the default while it exists.
    let mut default_partition = None;
    let mut default_missing = None;
    if settings.default_partition.is_empty() {
        let kept = store.owners.default_partition.as_ref().and_then(|d| {
            partitions
                .iter()
                .position(|p| p.0.name.as_str() == d.as_str())
        });
        if let Some(p) = kept.or((!partitions.is_empty()).then_some(0)) {
            partitions[p].0.default = true;
            default_partition = Some(partitions[p].0.name.to_string());
        }
    } else if !partitions
        .iter()
        .any(|p| p.0.name.as_str() == settings.default_partition)
    {
        default_missing = Some(settings.default_partition.clone());
    }
    // the accepted nodes in natural name order (each name has one owner): where the claims
    // came in that order (node names taken in unit order, the usual case), in the vector they
    // were put in (an in-place collect, no copy of 10,000 nodes: `flatten` is not collected
    // in place, `filter_map` is); else in the claims' order
    #[allow(clippy::filter_map_identity)]
    let accepted: Vec<Accepted<'_>> = if settled.order.is_sorted() {
        accepted_at.into_iter().filter_map(|a| a).collect()
    } else {
        settled
            .order
            .iter()
            .filter_map(|&at| accepted_at[at].take())
            .collect()
    };
    Admitted {
        accepted,
        partitions,
        out,
        waiting_apps,
        owners: Owners {
            partitions: partition_owners,
            default_partition,
        },
        owner_changes,
        default_missing,
    }
}

/// Both files, or why they cannot be written.
fn render(
    settings: &Settings,
    accepted: &[Accepted<'_>],
    records: usize,
    partitions: &[(crate::slurm::Partition, Vec<&str>)],
) -> Result<(String, String), String> {
    let host = settings.hostname.as_ref().map_or("", NodeName::as_str);
    let mut head = SlurmConf::new(&settings.cluster_name, host);
    if settings.auth == AuthKind::Slurm {
        head.owned
            .insert(GlobalKey::AuthType, "auth/slurm".to_owned());
        head.owned
            .insert(GlobalKey::CredType, "cred/slurm".to_owned());
    }
    apply_parameters(&mut head, &settings.slurm_conf_parameters).map_err(|e| e.to_string())?;
    // a job without `--mem` gets a share of a node, not all of it: per CPU and per GPU, the
    // least any node offers. A minimum counts a record twice no differently from once, so only
    // a record's run of nodes is skipped (nodes of one record mostly come in a run), and no
    // table of the records seen is kept (10,000 distinct records: 10,000 inserts).
    let memory = settings
        .default_memory
        .as_ref()
        .map_err(ToString::to_string)?;
    let nodes = accepted
        .iter()
        .enumerate()
        .filter(|(i, a)| *i == 0 || accepted[i - 1].place != a.place)
        .filter_map(|(_, a)| a.shape.memory(a.record.real_memory));
    for (key, mb) in memory.lines(nodes, &head.extra) {
        head.extra.push((key.to_owned(), mb.to_string()));
    }
    let health = settings
        .health_check
        .as_ref()
        .map_err(ToString::to_string)?;
    head.owned
        .insert(GlobalKey::HealthCheckInterval, health.interval.to_string());
    head.owned
        .insert(GlobalKey::HealthCheckNodeState, health.node_state.clone());
    if let Some(t) = health.timeout {
        head.owned
            .insert(GlobalKey::HealthCheckTimeout, t.to_string());
    }
    if settings.openmetrics {
        head.owned.insert(
            GlobalKey::MetricsType,
            crate::slurm::openmetrics::METRICS_TYPE.to_owned(),
        );
    }
    if let Some(path) = &settings.controllers.state_save_location {
        head.owned
            .insert(GlobalKey::StateSaveLocation, path.clone());
    }
    head.slurmctld_hosts
        .extend(settings.controllers.others.iter().cloned());
    // `gpu` plus the shared GRES (shard, mps) the accepted nodes carry
    head.set_gres_types(
        accepted
            .iter()
            .flat_map(|a| a.gres.names.iter().map(String::as_str)),
    );
    check_max_node_count(&head, accepted.len()).map_err(|e| e.to_string())?;
    let mut slurm = render_slurm_conf_head(&head).map_err(|e| e.to_string())?;
    slurm.reserve(accepted.len() * 200);
    // node lines: one per record (a record that names one host each: one per node), in the
    // order of each line's first name; runs of one shape share a `NodeName=DEFAULT` line
    let defaults = defaults_apply(accepted.iter().map(|a| a.shape.keys()));
    push_node_lines(
        &mut slurm,
        defaults,
        fold(accepted, records, |a| a.record.foldable.then_some(a.place))
            .map(|(hostlist, a)| a.shape.line(hostlist, a.record.real_memory)),
    );
    for (p, names) in partitions {
        let nodes = (!names.is_empty() || !p.nodes.is_empty()).then(|| {
            let mut all: Vec<&str> = p.nodes.iter().map(|n| n.as_str()).collect();
            all.extend(names.iter().copied());
            compress(&all)
        });
        push_partition_line(&mut slurm, p, nodes.as_deref());
    }
    let down: Vec<&str> = accepted
        .iter()
        .filter(|a| a.new_node)
        .map(|a| a.name)
        .collect();
    if !down.is_empty() {
        let hostlist = compress(&down);
        push_down_nodes_line(
            &mut slurm,
            &hostlist,
            Some(NodeState::Down),
            Some(NEW_NODE_REASON),
        );
    }
    let mut gres = String::with_capacity(HEADER.len() + accepted.len() * 40);
    gres.push_str(HEADER);
    // nodes whose GRES lines are equal share them
    // (each distinct GRES part's lines are looked up once, by its id, not once per node)
    let mut lists: NameMap<&[String], usize> = NameMap::default();
    let mut of_part: NameMap<u32, usize> = NameMap::default();
    let with_gres = accepted.iter().filter(|a| !a.gres.lines.is_empty());
    let ids: Vec<(&Accepted<'_>, usize)> = with_gres
        .map(|a| {
            let list = *of_part.entry(a.record.gres).or_insert_with(|| {
                let next = lists.len();
                *lists.entry(a.gres.lines.as_slice()).or_insert(next)
            });
            (a, list)
        })
        .collect();
    let groups = fold_pairs(
        ids.iter().map(|(a, id)| (a.name, Some(*id), a.gres)),
        lists.len(),
    );
    for (hostlist, gres_part) in groups {
        for line in &gres_part.lines {
            gres.push_str("NodeName=");
            gres.push_str(&hostlist);
            gres.push(' ');
            gres.push_str(line);
            gres.push('\n');
        }
    }
    Ok((slurm, gres))
}

/// Accepted nodes folded by `key` (below `keys`; `None`: a line of its own) into `(hostlist,
/// first node of the group)`, in the order of each group's first name.
fn fold<'a, 's: 'a>(
    accepted: &'a [Accepted<'s>],
    keys: usize,
    key: impl Fn(&Accepted<'s>) -> Option<usize>,
) -> Folded<'a, Accepted<'s>> {
    fold_pairs(accepted.iter().map(|a| (a.name, key(a), a)), keys)
}

/// The names of one group: a node of its own (most nodes, when every node's line differs)
/// costs no vector and no hostlist of its own; its name is the hostlist.
enum Names<'s> {
    One(&'s str),
    Many(Vec<&'s str>),
}

impl<'s> Names<'s> {
    /// The first name given.
    fn first(&self) -> &'s str {
        match self {
            Names::One(name) => name,
            Names::Many(names) => names.first().copied().unwrap_or_default(),
        }
    }
}

/// Names grouped by key (`None`: a group of its own), each group as its hostlist, in the order
/// of the groups' first names. The names come in natural order (the accepted nodes'), so the
/// groups do too: they are not sorted again (10,000 comparisons of natural keys when every
/// node is its own group).
fn fold_pairs<'s, T>(
    items: impl Iterator<Item = (&'s str, Option<usize>, &'s T)>,
    keys: usize,
) -> Folded<'s, T> {
    // each key's group by the key itself: keys are places (a record's among the store's
    // records, a GRES part's among the distinct ones), so a table, not a hash map (10,000
    // inserts and a 280 KB table at 10,000 distinct nodes; docs/BENCHMARKS.md, issue 38,
    // ninth pass)
    let mut group_of: Vec<Option<u32>> = vec![None; keys];
    let mut groups: Vec<(&'s T, Names<'s>)> = Vec::new();
    for (name, key, record) in items {
        let slot = key.and_then(|k| group_of.get_mut(k));
        match slot {
            // a key beyond the table (none is) has a line of its own
            None => groups.push((record, Names::One(name))),
            Some(Some(g)) => match &mut groups[*g as usize].1 {
                Names::Many(names) => names.push(name),
                Names::One(first) => groups[*g as usize].1 = Names::Many(vec![*first, name]),
            },
            Some(slot) => {
                *slot = u32::try_from(groups.len()).ok();
                groups.push((record, Names::One(name)));
            }
        }
    }
    // names given in natural order make groups in the order of their first names
    debug_assert!(
        groups.is_sorted_by(|a, b| natural_key(a.1.first()) <= natural_key(b.1.first())),
        "names not given in natural order"
    );
    // each group's hostlist made as its line is written: no second vector of 10,000 lines
    groups.into_iter().map(|(record, names)| match names {
        Names::One(name) => (Cow::Borrowed(name), record),
        Names::Many(names) => (Cow::Owned(compress(&names)), record),
    })
}

/// Folded groups, each as `(hostlist, item)` ([`fold_pairs`]), the hostlist made as each group
/// is taken.
type Folded<'s, T> = std::iter::Map<
    std::vec::IntoIter<(&'s T, Names<'s>)>,
    fn((&'s T, Names<'s>)) -> (Cow<'s, str>, &'s T),
>;

/// What slurmctld runs once it took the files: each node's `Gres=` value, the new nodes, and
/// the files' checksums; and each file's own digest.
fn applied(accepted: &[Accepted<'_>], slurm_conf: &str, gres_conf: &str) -> (Applied, FileDigests) {
    let (digests, base) = digests(
        slurm_conf.as_bytes(),
        gres_conf.as_bytes(),
        CGROUP_CONF_TEXT.as_bytes(),
    );
    let applied = Applied::new(
        accepted.iter().map(|a| (a.name, a.gres.value.as_str())),
        accepted
            .iter()
            .filter(|a| a.new_node)
            .map(|a| a.name.to_owned())
            .collect(),
        digests.files_hash(),
        base,
    );
    (applied, digests)
}

/// The XXH3-64 of each of the three files, as [`crate::charms::host::Host::checksum`] gives
/// it for the file on disk: the plan knows from these which files differ from what is there,
/// and [`Applied::files_hash`] is made of them, so each file is hashed once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileDigests {
    /// slurm.conf's.
    pub slurm_conf: u64,
    /// gres.conf's.
    pub gres_conf: u64,
    /// cgroup.conf's.
    pub cgroup_conf: u64,
}

impl FileDigests {
    /// The digest of the file at `path` (`None` for any file but the three).
    pub fn of(&self, path: &str) -> Option<u64> {
        match path {
            super::SLURM_CONF => Some(self.slurm_conf),
            super::GRES_CONF => Some(self.gres_conf),
            super::CGROUP_CONF => Some(self.cgroup_conf),
            _ => None,
        }
    }

    /// [`Applied::files_hash`]: the three digests hashed together.
    fn files_hash(&self) -> u64 {
        combined(self.gres_conf, self.cgroup_conf, self.slurm_conf)
    }
}

/// [`Applied::files_hash`] of a set of files: what the store says slurmctld runs, and what the
/// last accepted copies are checked against before they are put back.
pub fn files_hash(slurm_conf: &[u8], gres_conf: &[u8], cgroup_conf: &[u8]) -> u64 {
    digests(slurm_conf, gres_conf, cgroup_conf).0.files_hash()
}

/// Each file's digest and [`Applied::base_hash`], slurm.conf read once: its digest up to its
/// `DownNodes` lines (which come last) goes into the second, and the same hash carried on to
/// its end is its own digest.
fn digests(slurm_conf: &[u8], gres_conf: &[u8], cgroup_conf: &[u8]) -> (FileDigests, u64) {
    let base = without_down_nodes(slurm_conf);
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(base);
    let base_digest = h.digest();
    h.update(&slurm_conf[base.len()..]);
    let digests = FileDigests {
        slurm_conf: h.digest(),
        gres_conf: checksum(&[gres_conf]),
        cgroup_conf: checksum(&[cgroup_conf]),
    };
    let base_hash = combined(digests.gres_conf, digests.cgroup_conf, base_digest);
    (digests, base_hash)
}

/// Three digests hashed together, in order.
fn combined(a: u64, b: u64, c: u64) -> u64 {
    checksum(&[&a.to_le_bytes(), &b.to_le_bytes(), &c.to_le_bytes()])
}

/// slurm.conf without its `DownNodes` lines, which come last: found from the end, a line at a
/// time, not by searching the whole text.
fn without_down_nodes(slurm_conf: &[u8]) -> &[u8] {
    let mut end = slurm_conf.len();
    loop {
        let text = &slurm_conf[..end];
        let last_line = text.strip_suffix(b"\n").unwrap_or(text);
        let start = last_line
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |at| at + 1);
        if start > 0 && slurm_conf[start..end].starts_with(b"DownNodes=") {
            end = start;
        } else {
            return text;
        }
    }
}

// ---- owners ----

/// Settles ownership of names: `previous` owners (name, owner) keep every name they still
/// claim; each name no one owns goes to its first claimant in `claims` (already in arrival
/// order: relation id, then unit number). Returns the new table (name → owner), borrowing
/// every string: at 10,000 nodes nothing is copied.
pub fn settle<'a>(
    previous: impl IntoIterator<Item = (&'a str, &'a str)>,
    claims: &[(&'a str, &'a str)],
) -> NameMap<&'a str, &'a str> {
    // Claims by name, so keeping a previous owner costs one lookup, not a scan of all claims.
    let mut claimed: HashSet<(&str, &str), crate::charms::common::NameHasher> = HashSet::default();
    claimed.reserve(claims.len());
    claimed.extend(claims.iter().copied());
    let mut owners: NameMap<&str, &str> = NameMap::default();
    owners.reserve(claims.len());
    for (name, owner) in previous {
        if claimed.contains(&(name, owner)) {
            owners.entry(name).or_insert(owner);
        }
    }
    if owners.len() == claims.len() {
        // every claim is its owner's (the usual hook): nothing to add
        return owners;
    }
    for &(name, owner) in claims {
        owners.entry(name).or_insert(owner);
    }
    owners
}

/// What [`settle_flagged`] decided.
pub struct Settled<'a> {
    /// Each claim's owner (the unit its name went to), in the order of the claims.
    pub owners: Vec<&'a str>,
    /// The claims' places in natural name order (a stable sort: each name's claims in arrival
    /// order), so that what follows need not sort the names again.
    pub order: Vec<usize>,
}

/// [`settle`] for node names, whose ownership is a flag on each claimant's cache entry
/// ([`super::store::Unit::owner`], kept only while the unit publishes the name it owned):
/// `claims` (name, unit, the unit owns it), in arrival order. A flagged claimant keeps its
/// name; each name no flagged claimant holds goes to its first claimant. The claims are put in
/// natural name order (a stable sort, so each name's claims keep their arrival order; names
/// taken in unit order mostly are in that order already, which costs one comparison a claim),
/// and each name's claims are then next to each other: no table of 10,000 names is built. (Two
/// flagged claims of one name exist only in a damaged cache: the first in arrival order keeps
/// it.)
pub fn settle_flagged<'a>(claims: &[(&'a str, &'a str, bool)]) -> Settled<'a> {
    let mut order: Vec<usize> = (0..claims.len()).collect();
    sort_naturally(&mut order, |&i| claims[i].0);
    let mut owners = vec![""; claims.len()];
    for same_name in order.chunk_by(|&a, &b| claims[a].0 == claims[b].0) {
        let first = same_name
            .iter()
            .find(|&&i| claims[i].2)
            .or(same_name.first())
            .map_or("", |&i| claims[i].1);
        for &i in same_name {
            owners[i] = first;
        }
    }
    Settled { owners, order }
}

#[cfg(test)]
mod owners_tests {
    use super::*;

    #[test]
    fn the_first_owner_keeps_its_name() {
        let first = settle([], &[("gpu-node-0", "a/0")]);
        // A newcomer listed first (e.g. a relation id that sorts first) does not take it.
        let later = settle(first, &[("gpu-node-0", "b/0"), ("gpu-node-0", "a/0")]);
        assert_eq!(later["gpu-node-0"], "a/0");
        // Once the owner is gone the name is free for the next claimant.
        let gone = settle(later, &[("gpu-node-0", "b/0")]);
        assert_eq!(gone["gpu-node-0"], "b/0");
    }

    #[test]
    fn a_flagged_claimant_keeps_its_name() {
        // A newcomer listed first does not take the name its owner (flagged) still claims.
        let later = settle_flagged(&[("gpu-node-0", "b/0", false), ("gpu-node-0", "a/0", true)]);
        assert_eq!(later.owners, ["a/0", "a/0"]);
        // No flagged claimant: the first claim wins.
        let fresh = settle_flagged(&[("gpu-node-0", "b/0", false), ("gpu-node-0", "a/0", false)]);
        assert_eq!(fresh.owners, ["b/0", "b/0"]);
        // names out of natural order, their claims apart: each settled on its own
        let mixed = settle_flagged(&[
            ("n10", "a/0", false),
            ("n9", "b/0", false),
            ("n10", "c/0", true),
            ("n9", "d/0", false),
            ("n09", "e/0", false),
        ]);
        assert_eq!(mixed.owners, ["c/0", "b/0", "c/0", "b/0", "e/0"]);
        // the claims in natural name order (n9, n09, n10), each name's in arrival order
        assert_eq!(mixed.order, [1, 3, 4, 0, 2]);
    }

    /// The plain definition: a table of names, the flagged claimants first, then the first
    /// claimant of each name left.
    fn settle_by_table<'a>(claims: &[(&'a str, &'a str, bool)]) -> Vec<&'a str> {
        let mut owners: BTreeMap<&str, &str> = BTreeMap::new();
        for &(name, unit, _) in claims.iter().filter(|c| c.2) {
            owners.entry(name).or_insert(unit);
        }
        for &(name, unit, _) in claims {
            owners.entry(name).or_insert(unit);
        }
        claims.iter().map(|c| owners[c.0]).collect()
    }

    proptest::proptest! {
        #[test]
        fn settling_in_name_order_gives_the_tables_owners(
            claims in proptest::collection::vec(("(n|gpu-)0{0,1}[0-9]{1,2}", proptest::bool::ANY), 0..60),
        ) {
            let units: Vec<String> = (0..claims.len()).map(|k| format!("u/{k}")).collect();
            let claims: Vec<(&str, &str, bool)> = claims
                .iter()
                .zip(&units)
                .map(|((name, flagged), unit)| (name.as_str(), unit.as_str(), *flagged))
                .collect();
            let settled = settle_flagged(&claims);
            proptest::prop_assert_eq!(&settled.owners, &settle_by_table(&claims));
            // the order is a stable sort of the claims by natural name
            let mut sorted: Vec<usize> = (0..claims.len()).collect();
            sorted.sort_by(|&a, &b| natural_cmp(claims[a].0, claims[b].0));
            proptest::prop_assert_eq!(settled.order, sorted);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each of the three files is looked up by its own path, and no other file has a digest
    /// (the plan then counts it as changed).
    #[test]
    fn digests_are_found_by_their_files_path() {
        let (d, _) = digests(b"slurm\n", b"gres\n", b"cg\n");
        assert_eq!(
            d.of(super::super::SLURM_CONF),
            Some(checksum(&[b"slurm\n"]))
        );
        assert_eq!(d.of(super::super::GRES_CONF), Some(checksum(&[b"gres\n"])));
        assert_eq!(d.of(super::super::CGROUP_CONF), Some(checksum(&[b"cg\n"])));
        assert_eq!(d.of(crate::charms::common::SLURM_KEY), None);
    }

    /// Each file's digest is its plain XXH3-64 (what `Host::checksum` gives for the file on
    /// disk); the two hashes are those of the three digests, slurm.conf's taken whole and
    /// without the `DownNodes` lines, found wherever they start (the plain definition).
    #[test]
    fn base_hash_leaves_out_exactly_the_down_nodes_lines() {
        let head =
            "# header\nClusterName=c\nNodeName=n[1-3] CPUs=4\nPartitionName=p Nodes=n[1-3]\n";
        let plain = |slurm: &str| {
            let base = match slurm.find("\nDownNodes=") {
                Some(at) => &slurm[..at + 1],
                None => slurm,
            };
            let h = |s: &str| {
                let of = |b: &[u8]| checksum(&[b]).to_le_bytes();
                checksum(&[&of(b"gres\n"), &of(b"cg\n"), &of(s.as_bytes())])
            };
            (h(slurm), h(base))
        };
        let one = format!("{head}DownNodes=n1 State=DOWN Reason=\"New node.\"\n");
        let two = format!("{one}DownNodes=n[2-3] State=DOWN Reason=\"New node.\"\n");
        for slurm in [head, &one, &two, "", "DownNodes=x\n", "a\nDownNodes=x"] {
            let (digests, base) = digests(slurm.as_bytes(), b"gres\n", b"cg\n");
            assert_eq!((digests.files_hash(), base), plain(slurm), "{slurm:?}");
            assert_eq!(
                files_hash(slurm.as_bytes(), b"gres\n", b"cg\n"),
                plain(slurm).0
            );
            assert_eq!(
                digests,
                FileDigests {
                    slurm_conf: checksum(&[slurm.as_bytes()]),
                    gres_conf: checksum(&[b"gres\n"]),
                    cgroup_conf: checksum(&[b"cg\n"]),
                }
            );
        }
        let (full, base) = digests(one.as_bytes(), b"gres\n", b"cg\n");
        assert_ne!(full.files_hash(), base);
        assert_eq!(base, digests(head.as_bytes(), b"gres\n", b"cg\n").1);
    }
}
