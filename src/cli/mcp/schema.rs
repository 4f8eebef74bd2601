//! `tools/list`: every tool with its input schema, generated from the command's own clap
//! options (names, types, help with units), plus the paging arguments.

use super::rpc::DEFAULT_LIMIT;
use super::tools::{HIDDEN, PATH_ARGS, TOOLS};
use clap::CommandFactory;
use serde_json::{Map, Value, json};

/// `tools/list`: each tool with its input schema, from the command's own options.
pub(super) fn tools_list() -> Vec<Value> {
    let cmd = crate::cli::Cli::command();
    let paging = [
        (
            "limit",
            json!({"type": "integer", "minimum": 0, "description": format!("Rows per page of the result's row array(s) [default: {DEFAULT_LIMIT}]")}),
        ),
        (
            "offset",
            json!({"type": "integer", "minimum": 0, "description": "First row of the page [default: 0]; `page.next_offset` of the previous result"}),
        ),
        (
            "max_chars",
            json!({"type": "integer", "minimum": 1000, "description": "Largest result, characters: rows are cut to fit [default: the server's --max-chars, 20000]"}),
        ),
    ];
    TOOLS
        .iter()
        .map(|t| {
            let mut props = Map::new();
            let mut required = Vec::new();
            if t.command.is_empty() {
                props.insert("path".into(), json!({"type": "string", "description": "A log dir or capture file under a root [default: every root]"}));
            } else if let Some(sub) = cmd.find_subcommand(t.command) {
                for a in sub.get_arguments() {
                    let id = a.get_id().as_str();
                    if HIDDEN.contains(&id) {
                        continue;
                    }
                    let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
                    let (key, schema) = if a.is_positional() {
                        if a.is_required_set() {
                            required.push(Value::from(id));
                        }
                        let what = if PATH_ARGS.contains(&id) { " (a path under a root)" } else { "" };
                        (id.to_string(), json!({"type": "string", "description": format!("{help}{what}")}))
                    } else {
                        let Some(long) = a.get_long() else { continue };
                        let flag = matches!(a.get_action(), clap::ArgAction::SetTrue);
                        let mut s = if flag {
                            json!({"type": "boolean"})
                        } else if a.get_value_delimiter().is_some() {
                            json!({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]})
                        } else {
                            json!({"type": ["string", "number"]})
                        };
                        let values: Vec<String> = a.get_possible_values().iter().filter(|_| !flag).map(|p| p.get_name().to_string()).collect();
                        if !values.is_empty() {
                            s = json!({"type": "string", "enum": values});
                        }
                        let defaults: Vec<String> = a.get_default_values().iter().map(|d| d.to_string_lossy().into_owned()).collect();
                        let mut d = help;
                        if !defaults.is_empty() && !flag {
                            d.push_str(&format!(" [default: {}]", defaults.join(",")));
                        }
                        (long.to_string(), {
                            s["description"] = Value::from(d);
                            s
                        })
                    };
                    props.insert(key, schema);
                }
            }
            for (k, s) in &paging {
                props.insert((*k).into(), s.clone());
            }
            json!({
                "name": t.name,
                "description": t.description,
                "inputSchema": {"type": "object", "properties": props, "required": required, "additionalProperties": false},
            })
        })
        .collect()
}
