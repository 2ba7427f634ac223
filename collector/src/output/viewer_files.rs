//! Where the built viewer's files come from, for `view` and `export`: a folder named on the
//! command line, a checkout's `dist/`, or the copy embedded in the binary (`collector/build.rs`).

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/viewer_files.rs"));
}

/// How to get a viewer, for a binary built without one: exact commands.
const HOW_TO_GET_IT: &str = "install a release build, which carries the viewer \
(`pip install infermeter`), or build it in a checkout of infermeter: \
`bash scripts/setup.sh && bash scripts/build-viewer.sh && \
INFERMETER_VIEWER_DIST=$PWD/dist cargo build --release --locked -p infermeter` \
(or pass --dist DIR, a built viewer's folder)";

/// Why the viewer's files cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum ViewerError {
    #[error(
        "this infermeter was built without the viewer, and no built viewer (dist/) was found \
         in an infermeter checkout above {searched}; {HOW_TO_GET_IT}"
    )]
    Missing { searched: String },
    #[error("{dir} is not a built viewer (it has no index.html); {HOW_TO_GET_IT}")]
    NotBuilt { dir: PathBuf },
    #[error("cannot read the viewer's file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
}

/// The built viewer's files.
#[derive(Debug, Clone, PartialEq)]
pub enum ViewerFiles {
    /// Embedded in this binary at build time.
    Embedded,
    /// A `dist/` folder on disk: named with `--dist`, or a checkout's (for development: the
    /// freshest build of the viewer there is).
    Folder(PathBuf),
}

impl fmt::Display for ViewerFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ViewerFiles::Embedded => write!(f, "the viewer embedded in this binary"),
            ViewerFiles::Folder(dir) => write!(f, "the viewer built in {}", dir.display()),
        }
    }
}

impl ViewerFiles {
    /// `explicit` when given; else a checkout's `dist/` above the executable or the current
    /// directory; else the embedded copy.
    pub fn locate(explicit: Option<&Path>) -> Result<ViewerFiles, ViewerError> {
        let starts: Vec<PathBuf> = [
            std::env::current_exe()
                .ok()
                .and_then(|e| e.parent().map(Path::to_path_buf)),
            std::env::current_dir().ok(),
        ]
        .into_iter()
        .flatten()
        .collect();
        locate_in(explicit, &starts, !embedded::FILES.is_empty())
    }

    /// The file at `path` (relative to `dist/`, with `/`).
    pub fn read(&self, path: &str) -> Result<Cow<'static, [u8]>, ViewerError> {
        match self {
            ViewerFiles::Embedded => embedded_file(path)
                .map(|(_, bytes)| Cow::Borrowed(bytes))
                .ok_or_else(|| ViewerError::Read {
                    path: path.to_string(),
                    source: std::io::ErrorKind::NotFound.into(),
                }),
            ViewerFiles::Folder(dir) => {
                std::fs::read(dir.join(path))
                    .map(Cow::Owned)
                    .map_err(|source| ViewerError::Read {
                        path: dir.join(path).display().to_string(),
                        source,
                    })
            }
        }
    }

    /// Every file's path (relative to `dist/`, with `/`), sorted; the bundled reports (`data/`)
    /// left out.
    pub fn paths(&self) -> Result<Vec<String>, ViewerError> {
        match self {
            ViewerFiles::Embedded => Ok(embedded::FILES.iter().map(|f| f.0.to_string()).collect()),
            ViewerFiles::Folder(dir) => {
                let mut paths = Vec::new();
                folder_paths(dir, "", &mut paths).map_err(|source| ViewerError::Read {
                    path: dir.display().to_string(),
                    source,
                })?;
                paths.sort();
                Ok(paths)
            }
        }
    }
}

/// An embedded file's ETag and contents.
pub fn embedded_file(path: &str) -> Option<(&'static str, &'static [u8])> {
    embedded::FILES
        .binary_search_by(|f| f.0.cmp(path))
        .ok()
        .map(|i| (embedded::FILES[i].1, embedded::FILES[i].2))
}

fn locate_in(
    explicit: Option<&Path>,
    starts: &[PathBuf],
    embedded: bool,
) -> Result<ViewerFiles, ViewerError> {
    if let Some(dir) = explicit {
        return if dir.join("index.html").is_file() {
            Ok(ViewerFiles::Folder(dir.to_path_buf()))
        } else {
            Err(ViewerError::NotBuilt {
                dir: dir.to_path_buf(),
            })
        };
    }
    let checkout = starts
        .iter()
        .flat_map(|start| start.ancestors())
        .find(|dir| is_checkout_with_viewer(dir));
    match checkout {
        Some(root) => Ok(ViewerFiles::Folder(root.join("dist"))),
        None if embedded => Ok(ViewerFiles::Embedded),
        None => Err(ViewerError::Missing {
            searched: starts
                .iter()
                .map(|s| s.display().to_string())
                .collect::<Vec<_>>()
                .join(" or "),
        }),
    }
}

/// A checkout of infermeter (its viewer's `Trunk.toml` beside the collector) with a built
/// viewer: not any `dist/` a web project may have.
fn is_checkout_with_viewer(dir: &Path) -> bool {
    dir.join("Trunk.toml").is_file()
        && dir.join("collector/Cargo.toml").is_file()
        && dir.join("dist/index.html").is_file()
}

fn folder_paths(dir: &Path, prefix: &str, paths: &mut Vec<String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = format!("{prefix}{name}");
        if path == "data" {
            continue;
        }
        if entry.file_type()?.is_dir() {
            folder_paths(&entry.path(), &format!("{path}/"), paths)?;
        } else {
            paths.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A checkout of infermeter with a built viewer, under `root`.
    fn checkout(root: &Path) {
        write(&root.join("Trunk.toml"), "[build]");
        write(&root.join("collector/Cargo.toml"), "[package]");
        write(&root.join("dist/index.html"), "<html>");
    }

    #[test]
    fn a_named_folder_wins_and_must_hold_a_built_viewer() {
        let dir = tempfile::tempdir().unwrap();
        checkout(dir.path());
        let named = dir.path().join("dist");
        let starts = [dir.path().to_path_buf()];
        assert_eq!(
            locate_in(Some(&named), &starts, true).unwrap(),
            ViewerFiles::Folder(named)
        );
        let empty = dir.path().join("collector");
        let err = locate_in(Some(&empty), &starts, true).unwrap_err();
        assert!(matches!(err, ViewerError::NotBuilt { .. }), "{err}");
        assert!(err.to_string().contains("has no index.html"), "{err}");
    }

    #[test]
    fn a_checkouts_build_is_preferred_to_the_embedded_copy() {
        let dir = tempfile::tempdir().unwrap();
        checkout(dir.path());
        let below = dir.path().join("collector/src");
        assert_eq!(
            locate_in(None, &[below], true).unwrap(),
            ViewerFiles::Folder(dir.path().join("dist"))
        );
    }

    #[test]
    fn another_projects_dist_is_not_taken_for_the_viewer() {
        let dir = tempfile::tempdir().unwrap();
        write(
            &dir.path().join("dist/index.html"),
            "<html>someone's web app",
        );
        let starts = [dir.path().join("src")];
        assert_eq!(
            locate_in(None, &starts, true).unwrap(),
            ViewerFiles::Embedded
        );
        // Built without the viewer: the error says how to get it, with the exact commands.
        let err = locate_in(None, &starts, false).unwrap_err().to_string();
        assert!(err.contains("built without the viewer"), "{err}");
        assert!(err.contains("pip install infermeter"), "{err}");
        assert!(err.contains("bash scripts/build-viewer.sh"), "{err}");
        assert!(err.contains("cargo build --release"), "{err}");
        assert!(
            err.contains(&dir.path().join("src").display().to_string()),
            "{err}"
        );
    }

    #[test]
    fn a_folders_paths_leave_out_the_bundled_reports() {
        let dir = tempfile::tempdir().unwrap();
        for path in [
            "index.html",
            "a.js.gz",
            "snippets/x/y.js",
            "data/index.json",
        ] {
            write(&dir.path().join(path), "x");
        }
        let files = ViewerFiles::Folder(dir.path().to_path_buf());
        assert_eq!(
            files.paths().unwrap(),
            ["a.js.gz", "index.html", "snippets/x/y.js"]
        );
        assert_eq!(&*files.read("snippets/x/y.js").unwrap(), b"x");
        let err = files.read("missing.js").unwrap_err().to_string();
        assert!(err.contains("missing.js"), "{err}");
    }
}
