//! Action results: flattening to dotted keys and Juju's key rules, checked before `action-set`.

use juju_runtime::{
    ActionResultError, flatten_action_results as flatten,
    validate_action_result_key as validate_key,
};
use serde_json::json;

fn map(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    v.as_object().unwrap().clone()
}

#[test]
fn nested_maps_flatten_to_dotted_string_keys() {
    let flat = flatten(&map(json!({
        "count": 2,
        "ok": true,
        "gpus": {"gpu-0": {"model": "h100", "memory-mib": 81559}, "gpu-1": {"model": "a100"}},
        "note": null,
        "list": [1, "a"],
        "empty": {},
    })))
    .unwrap();
    let got: Vec<(&str, &str)> = flat.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        got,
        vec![
            ("count", "2"),
            ("gpus.gpu-0.memory-mib", "81559"),
            ("gpus.gpu-0.model", "h100"),
            ("gpus.gpu-1.model", "a100"),
            ("list", "[1,\"a\"]"),
            ("note", ""),
            ("ok", "true"),
        ]
    );
}

#[test]
fn valid_keys() {
    for key in ["a", "0", "a-b", "gpu0.model", "x.y-z.9", "a1-2b"] {
        assert_eq!(validate_key(key), Ok(()), "{key}");
    }
}

#[test]
fn invalid_keys_name_the_segment() {
    for (key, segment) in [
        ("", ""),
        ("A", "A"),
        ("-a", "-a"),
        ("a-", "a-"),
        ("a_b", "a_b"),
        ("a..b", ""),
        ("a.", ""),
        ("gpus.GPU0", "GPU0"),
        ("a b", "a b"),
        ("a=b", "a=b"),
        ("ü", "ü"),
    ] {
        assert_eq!(
            validate_key(key),
            Err(ActionResultError::InvalidKey {
                key: key.to_owned(),
                segment: segment.to_owned()
            }),
            "{key:?}"
        );
    }
}

#[test]
fn reserved_segments_are_refused() {
    for key in [
        "stdout",
        "stderr",
        "stdout-encoding",
        "stderr-encoding",
        "out.stdout",
    ] {
        let err = validate_key(key).unwrap_err();
        assert!(
            matches!(err, ActionResultError::ReservedKey { .. }),
            "{key}"
        );
        assert!(err.to_string().contains("reserved"));
    }
    // return-code is not refused by Juju (it is overwritten after the process exits).
    assert_eq!(validate_key("return-code"), Ok(()));
}

#[test]
fn flatten_checks_nested_keys_too() {
    let err = flatten(&map(json!({"gpus": {"GPU": "x"}}))).unwrap_err();
    assert!(matches!(err, ActionResultError::InvalidKey { key, .. } if key == "gpus.GPU"));
    let err = flatten(&map(json!({"result": {"stdout": "x"}}))).unwrap_err();
    assert!(matches!(err, ActionResultError::ReservedKey { .. }));
}

#[test]
fn same_key_dotted_and_nested_is_a_duplicate() {
    let err = flatten(&map(json!({"a.b": "1", "a": {"b": "2"}}))).unwrap_err();
    assert_eq!(
        err,
        ActionResultError::DuplicateKey {
            key: "a.b".to_owned()
        }
    );
}
