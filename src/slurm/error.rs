//! Error types of the slurm module: configuration errors (a model Slurm would reject or a value
//! that could inject a directive), parse errors (file, line, what was expected) and hostlist errors.

/// A configuration that must not be written: an invalid value, or a combination that Slurm
/// treats as fatal (reference `slurm-gres.md` §1.5, §2.3). Every message names what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A value is not one of the vocabulary's types ([`crate::slurm::types`]).
    #[error(transparent)]
    Vocab(#[from] crate::slurm::types::VocabError),
    /// A value is not acceptable for its key (whitespace, `#`, `=`, quote, control character,
    /// not a number, not a hostname, ...).
    #[error("invalid value for {key}: {value:?}: {reason}")]
    InvalidValue {
        /// The key (CamelCase) the value was given for.
        key: String,
        /// The offending value, as given.
        value: String,
        /// Why it was refused.
        reason: String,
    },
    /// A key name is not a Slurm key name (`[A-Za-z0-9_.]+`) or is unknown in its context.
    #[error("invalid key {key:?} in {context}: {reason}")]
    InvalidKey {
        /// The key as given.
        key: String,
        /// Where it appeared (e.g. `NodeName line`, `slurm-conf-parameters`).
        context: String,
        /// Why it was refused.
        reason: String,
    },
    /// A key is owned by the charm and cannot be overridden by an operator.
    #[error("{key} is set by the charm and cannot be overridden in {context}; remove it")]
    OwnedKey {
        /// The key (CamelCase).
        key: String,
        /// The override option it appeared in.
        context: String,
    },
    /// The same key was given twice in one record or override.
    #[error("{key} is given more than once in {context}; keep one")]
    DuplicateKey {
        /// The key (CamelCase).
        key: String,
        /// Where.
        context: String,
    },
    /// A required key is missing.
    #[error("{key} is required in {context}")]
    Missing {
        /// The key (CamelCase).
        key: String,
        /// Where.
        context: String,
    },
    /// A node is defined more than once (slurmctld: `Duplicated NodeHostName`, fatal).
    #[error("node {node} is defined more than once in slurm.conf; each NodeName must appear once")]
    DuplicateNode {
        /// The node name.
        node: String,
    },
    /// A partition is defined more than once (slurmctld: `duplicate entry for partition`, fatal).
    #[error("partition {partition} is defined more than once; each PartitionName must appear once")]
    DuplicatePartition {
        /// The partition name.
        partition: String,
    },
    /// A NodeSet is defined more than once.
    #[error("NodeSet {name} is defined more than once")]
    DuplicateNodeSet {
        /// The nodeset name.
        name: String,
    },
    /// A partition lists a node that is neither a NodeName, a NodeSet nor `ALL`.
    #[error("partition {partition} lists unknown node {node}; define it with NodeName or NodeSet")]
    UnknownPartitionNode {
        /// The partition name.
        partition: String,
        /// The unknown node.
        node: String,
    },
    /// A DownNodes entry names a node that is not defined by a NodeName line.
    #[error("DownNodes lists unknown node {node}; only configured nodes can be marked down")]
    UnknownDownNode {
        /// The unknown node.
        node: String,
    },
    /// A node appears in two DownNodes lines (its state would depend on line order).
    #[error("node {node} appears in more than one DownNodes line")]
    DuplicateDownNode {
        /// The node name.
        node: String,
    },
    /// slurm.conf `Gres=` of one node mixes typed and untyped records of one GRES name
    /// (`fatal: Some gpu GRES in slurm.conf have a type while others do not`).
    #[error("node {node}: Gres mixes typed and untyped {name}; give every {name} a type or none")]
    MixedTypedGres {
        /// The node name.
        node: String,
        /// The GRES name (e.g. `gpu`).
        name: String,
    },
    /// slurm.conf `Gres=` of one node names the same (name, type) twice.
    #[error("node {node}: Gres lists {spec} more than once; give one count per type")]
    DuplicateGresSpec {
        /// The node name.
        node: String,
        /// `name[:type]`.
        spec: String,
    },
    /// A Gres name is not listed in `GresTypes` (Slurm drops it with an error).
    #[error("node {node}: GRES name {name} is not listed in GresTypes")]
    GresNameNotInGresTypes {
        /// The node name (or `*` for global gres.conf records).
        node: String,
        /// The GRES name.
        name: String,
    },
    /// gres.conf records for one node and GRES name mix `File` and no `File`
    /// (`fatal: ... some records have "File" specification while others do not`).
    #[error("gres.conf for node {node}, {name}: some records have File and others do not")]
    MixedFileGres {
        /// The node name (or `*` for global records).
        node: String,
        /// The GRES name.
        name: String,
    },
    /// gres.conf records for one node and GRES name mix `Type` and no `Type`.
    #[error("gres.conf for node {node}, {name}: some records have Type and others do not")]
    MixedTypeGresConf {
        /// The node name (or `*`).
        node: String,
        /// The GRES name.
        name: String,
    },
    /// More than one gres.conf record with neither File nor Type (`gres.conf duplicate records`).
    #[error("gres.conf for node {node}, {name}: more than one record has neither File nor Type")]
    DuplicateUntypedGres {
        /// The node name (or `*`).
        node: String,
        /// The GRES name.
        name: String,
    },
    /// Two `File=` records of one GRES name on one node name the same device file (slurmd:
    /// `gpu duplicate device file name`, then `fatal: Gres GPU plugin failed to load
    /// configuration`).
    #[error(
        "gres.conf for node {node}, {name}: device file {file} is in more than one record; \
         each device belongs to one record"
    )]
    DuplicateDeviceFile {
        /// The node name (or `*`).
        node: String,
        /// The GRES name.
        name: String,
        /// The device file named twice.
        file: String,
    },
    /// A gres.conf record has both File and MultipleFiles (fatal, mutually exclusive).
    #[error("gres.conf for node {node}: File and MultipleFiles are mutually exclusive")]
    FileAndMultipleFiles {
        /// The node name (or `*`).
        node: String,
    },
    /// MultipleFiles with fewer than two files (`fatal: MultipleFiles does not contain multiple files`).
    #[error("gres.conf for node {node}: MultipleFiles needs at least two files, got {count}")]
    MultipleFilesTooFew {
        /// The node name (or `*`).
        node: String,
        /// The number of files given.
        count: usize,
    },
    /// A gres.conf record with File and an explicit Count that differs from the file count
    /// (`fatal: Invalid GRES record for gpu, count does not match File value`).
    #[error("gres.conf for node {node}: Count={count} does not match the {files} File entries")]
    CountNotFileCount {
        /// The node name (or `*`).
        node: String,
        /// The Count given.
        count: u64,
        /// The number of files.
        files: usize,
    },
    /// A gres.conf record lists the same device file twice.
    #[error("gres.conf for node {node}: device file {file} is listed more than once")]
    DuplicateFile {
        /// The node name (or `*`).
        node: String,
        /// The file path.
        file: String,
    },
    /// Links given on a record with more than one file (Slurm: one file per Links record).
    #[error("gres.conf for node {node}: Links needs a record with exactly one File")]
    LinksNeedOneFile {
        /// The node name (or `*`).
        node: String,
    },
    /// A gres.conf model gives one node two different record lists (in
    /// [`crate::slurm::GresConf::nodes`] and a group, or in two groups): the file would split
    /// the node's records over lines no check looked at together.
    #[error("gres.conf: node {node} is given two different record lists; give each node one")]
    GresNodeTwice {
        /// The node name.
        node: String,
    },
    /// slurm.conf `Gres=` count for a (node, type) differs from the devices in gres.conf
    /// (the node registers as `gres/gpu count reported lower than configured`, INVALID_REG).
    #[error(
        "node {node}: slurm.conf Gres={spec}:{slurm_conf} but gres.conf gives {gres_conf}; \
         counts and type strings must match exactly"
    )]
    GresCountMismatch {
        /// The node name.
        node: String,
        /// `name[:type]`.
        spec: String,
        /// Count in slurm.conf.
        slurm_conf: u64,
        /// Devices (or Count) in gres.conf.
        gres_conf: u64,
    },
}

impl ConfigError {
    /// Shorthand for [`ConfigError::InvalidValue`].
    pub fn invalid(key: &str, value: &str, reason: impl Into<String>) -> Self {
        ConfigError::InvalidValue {
            key: key.to_string(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}

/// A file could not be parsed; carries the file (origin), the 1-based line and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}:{line}: {kind}")]
pub struct ParseError {
    /// Where the text came from (a path or a name like `slurm-conf-parameters`).
    pub origin: String,
    /// 1-based line number of the (first physical line of the) logical line.
    pub line: usize,
    /// What went wrong.
    pub kind: ParseErrorKind,
}

/// What went wrong while parsing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseErrorKind {
    /// The text is not what Slurm's lexer accepts here.
    #[error("expected {expected}, found {found:?}")]
    Syntax {
        /// What was expected.
        expected: String,
        /// What was found.
        found: String,
    },
    /// The text parsed but the value or record is not acceptable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A hostlist in the file is malformed.
    #[error(transparent)]
    Hostlist(#[from] HostlistError),
}

/// A hostlist expression (`node[01-16],other`) is malformed or too large.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostlistError {
    /// Syntax error, with the expression and the reason.
    #[error("invalid hostlist {list:?}: {reason}")]
    Syntax {
        /// The expression.
        list: String,
        /// The reason.
        reason: String,
    },
    /// The expression expands to more names than allowed.
    #[error("hostlist {list:?} expands to more than {limit} names")]
    TooLarge {
        /// The expression.
        list: String,
        /// The limit.
        limit: usize,
    },
}
