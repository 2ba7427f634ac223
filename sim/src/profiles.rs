//! The engine's profile tables ([`infermeter_engine::profiles`]) with a user's TOML file merged
//! over the built-in ones (`--profiles FILE`): the reading and parsing happen here, the merging
//! and resolving in the engine crate.

use std::path::Path;

pub use infermeter_engine::profiles::*;

/// The built-in tables, with `extra` (a TOML file of the same shape) merged over them.
pub fn load(extra: Option<&Path>) -> Result<ProfileSet, ProfileError> {
    let Some(path) = extra else {
        return Ok(ProfileSet::builtin());
    };
    let name = path.display().to_string();
    let invalid = |message: String| ProfileError::Invalid {
        path: name.clone(),
        message,
    };
    let text =
        std::fs::read_to_string(path).map_err(|e| invalid(format!("cannot read it: {e}")))?;
    let table: toml::Table = text.parse().map_err(|e| invalid(format!("{e}")))?;
    let over = serde_json::to_value(table).map_err(|e| invalid(format!("{e}")))?;
    let mut value = ProfileSet::builtin_value();
    merge(&mut value, over);
    ProfileSet::from_value(value, &name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_file_merges_over_the_builtin_tables() {
        let dir = std::env::temp_dir().join(format!("infermeter-profiles-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("mine.toml");
        std::fs::write(
            &file,
            "[gpu.h200]\nvram_gib = 1000.0\n[gpu.mine]\nname='x'\nvram_gib=10.0\nmem_bw_gbs=1.0\ntflops_bf16=1.0\ntflops_fp8=1.0\ntflops_fp4=1.0\ninterconnect_gbs=1.0\nallreduce_latency_us=1.0\nmem_efficiency=1.0\nflop_efficiency=1.0\nreserved_gb=0.0\n",
        )
        .unwrap();
        let set = load(Some(&file)).unwrap();
        assert_eq!(set.gpu["h200"].vram_gib, 1000.0);
        assert_eq!(set.gpu["h200"].mem_bw_gbs, 4800.0);
        assert!(set.gpu.contains_key("mine"));
        std::fs::write(&file, "[gpu.h200\n").unwrap();
        let err = load(Some(&file)).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("profiles {}: ", file.display())),
            "{err}"
        );
        let missing = load(Some(&dir.join("absent.toml")))
            .unwrap_err()
            .to_string();
        assert!(missing.contains("cannot read it"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
