//! The parameters a command passes through to a report or list.

/// Refuses an empty (or blank) value of the option `option`: the engine and
/// the service read a blank parameter as one not given, so `--kinds ""`
/// would match every kind rather than the none it says.
pub fn not_blank(option: &str, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        return Err(format!(
            "{option} has an empty value; give it one, or leave the option out"
        ));
    }
    Ok(())
}

/// `--key value` / `--key=value` pairs as query parameters; `--data-source`
/// and `--base-currency` become `data_source` and `baseCurrency`. A value
/// may not be blank (see [`not_blank`]).
pub fn pairs(args: &[String]) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        let Some(name) = arg.strip_prefix("--") else {
            return Err(format!("unexpected `{arg}`: parameters are --name value"));
        };
        let (name, value) = match name.split_once('=') {
            Some((n, v)) => (n.to_string(), v.to_string()),
            None => {
                i += 1;
                let value = args
                    .get(i)
                    .ok_or_else(|| format!("--{name} needs a value"))?;
                (name.to_string(), value.clone())
            }
        };
        not_blank(&format!("--{name}"), &value)?;
        let name = match name.as_str() {
            "data-source" => "data_source".to_string(),
            "base-currency" => "baseCurrency".to_string(),
            _ => name,
        };
        if let Some((_, first)) = out.iter().find(|(given, _)| *given == name) {
            return Err(format!(
                "--{name} is given twice (`{first}`, then `{value}`); a parameter takes one \
                 value (several ids go in one, space-separated)"
            ));
        }
        out.push((name, value));
        i += 1;
    }
    Ok(out)
}
