//! Levels on disk: a collection file (`.xsb`, `.sok`, `.txt`), or a folder of them (the original
//! program keeps one level per file). The only part of `games::sokoban` that reads files; the
//! command line and the web page share it.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::level::{parse_collection, Level};

/// File names that may hold levels in a folder.
pub const LEVEL_EXTENSIONS: [&str; 3] = ["xsb", "sok", "txt"];

/// The levels of one file. A file holding one untitled level gives it the file's name.
pub fn read_file(path: &Path) -> anyhow::Result<Vec<Level>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    // Old collections are often Latin-1: their comments may be damaged, never the boards.
    let text = String::from_utf8_lossy(&bytes);
    let mut levels = parse_collection(&text).with_context(|| format!("{}", path.display()))?;
    if levels.len() == 1 && levels[0].title == "1" {
        levels[0].title = path.file_stem().map_or_else(|| "1".to_string(), |s| s.to_string_lossy().into_owned());
    }
    Ok(levels)
}

/// The level files of a folder, sorted by name.
fn level_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading the folder {}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| LEVEL_EXTENSIONS.iter().any(|x| e.eq_ignore_ascii_case(x))))
        .collect();
    files.sort();
    Ok(files)
}

/// Every level of a folder as one collection, and the files that could not be read (each
/// problem names its file). Only a folder that cannot be listed is an error.
pub fn read_folder(dir: &Path) -> anyhow::Result<(Vec<Level>, Vec<String>)> {
    let (mut levels, mut problems) = (Vec::new(), Vec::new());
    for file in level_files(dir)? {
        match read_file(&file) {
            Ok(found) => levels.extend(found),
            Err(e) => problems.push(format!("{e:#}")),
        }
    }
    Ok((levels, problems))
}

/// A collection file, or a folder read as one collection; any unreadable file is an error.
pub fn read_levels(path: &Path) -> anyhow::Result<Vec<Level>> {
    let levels = if path.is_dir() {
        let (levels, problems) = read_folder(path)?;
        if let Some(problem) = problems.into_iter().next() {
            bail!(problem);
        }
        levels
    } else {
        read_file(path)?
    };
    if levels.is_empty() {
        bail!("{}: no level found", path.display());
    }
    Ok(levels)
}
