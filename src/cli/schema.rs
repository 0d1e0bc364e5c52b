//! `crosspickle schema`: the JSON Schema of the case format, derived from the types the loader
//! reads, for editors (yaml-language-server) and validators (check-jsonschema).

use super::failure::{Failure, EXIT_OK};

pub fn schema() -> Result<i32, Failure> {
    let text =
        serde_json::to_string_pretty(&crate::case::case_schema()).expect("a schema serializes");
    crate::sys::stdout::emit(&(text + "\n"));
    Ok(EXIT_OK)
}
