//! An append-only JSON-lines log: each record is written and synced to disk before the caller
//! publishes it anywhere else, so that nothing a listener has seen can be missing after a crash.
//! On opening, the log is read back; a last line torn by a crash (no newline, or not JSON) is
//! cut off, since it was never acknowledged.
//!
//! A failed append (a full disk, a file-size limit, an I/O error) cuts the file back to its last
//! synced record before it returns, so that a half-written line never stays in the log and a
//! later append starts on a clean line; if even that fails, every append first tries again.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum EventLogError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path}, line {line}: not a log record: {source}")]
    Corrupt { path: PathBuf, line: usize, source: serde_json::Error },
}

pub struct EventLog {
    path: PathBuf,
    file: File,
    /// Length of the synced records: what the file is cut back to after a failed append.
    len: u64,
    /// A failed append could not be cut back yet: the file may end in a partial record.
    torn: bool,
    /// Bytes appended after `len` and not synced yet ([`EventLog::append_unsynced`]).
    unsynced: u64,
}

impl EventLog {
    /// Open (creating it if needed) and read back every complete record.
    pub fn open<T: DeserializeOwned>(path: &Path) -> Result<(EventLog, Vec<T>), EventLogError> {
        let io_err = |source| EventLogError::Io { path: path.to_path_buf(), source };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io_err)?;
        }
        let mut file = OpenOptions::new().read(true).append(true).create(true).open(path).map_err(io_err)?;
        let mut records = Vec::new();
        let mut good_len: u64 = 0;
        let mut reader = BufReader::new(&mut file);
        let mut line = String::new();
        let mut number = 0;
        loop {
            line.clear();
            let read = reader.read_line(&mut line).map_err(io_err)?;
            if read == 0 {
                break;
            }
            number += 1;
            let complete = line.ends_with('\n');
            if complete && line.trim().is_empty() {
                good_len += read as u64;
                continue;
            }
            match serde_json::from_str::<T>(line.trim_end()) {
                Ok(record) if complete => {
                    records.push(record);
                    good_len += read as u64;
                }
                // A torn last line: the process died while writing it.
                Ok(_) => break,
                Err(_) if !complete => break,
                Err(source) => return Err(EventLogError::Corrupt { path: path.to_path_buf(), line: number, source }),
            }
        }
        drop(reader);
        if file.metadata().map_err(io_err)?.len() != good_len {
            file.set_len(good_len).map_err(io_err)?;
            file.sync_all().map_err(io_err)?;
        }
        file.seek(SeekFrom::End(0)).map_err(io_err)?;
        Ok((EventLog { path: path.to_path_buf(), file, len: good_len, torn: false, unsynced: 0 }, records))
    }

    /// Every complete record of the log at `path`, read without changing the file.
    pub fn read<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, EventLogError> {
        let io_err = |source| EventLogError::Io { path: path.to_path_buf(), source };
        let file = File::open(path).map_err(io_err)?;
        let mut records = Vec::new();
        let mut reader = BufReader::new(file);
        let mut line = String::new();
        let mut number = 0;
        loop {
            line.clear();
            if reader.read_line(&mut line).map_err(io_err)? == 0 {
                break;
            }
            number += 1;
            if !line.ends_with('\n') {
                break;
            }
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<T>(line.trim_end()) {
                Ok(record) => records.push(record),
                Err(source) => return Err(EventLogError::Corrupt { path: path.to_path_buf(), line: number, source }),
            }
        }
        Ok(records)
    }

    /// Append one record and sync it to disk; only then may it be published.
    pub fn append<T: Serialize>(&mut self, record: &T) -> Result<(), EventLogError> {
        self.append_unsynced(record)?;
        self.sync()
    }

    /// Append one record without syncing it: several are synced together by
    /// [`EventLog::sync`] (the hall's batches), and none may be published before.
    pub fn append_unsynced<T: Serialize>(&mut self, record: &T) -> Result<(), EventLogError> {
        let path = self.path.clone();
        let io_err = move |source| EventLogError::Io { path: path.clone(), source };
        let mut line = serde_json::to_string(record).map_err(|e| io_err(io::Error::other(e)))?;
        line.push('\n');
        if self.torn {
            self.cut_back().map_err(&io_err)?;
        }
        if let Err(e) = self.file.write_all(line.as_bytes()) {
            self.give_up_unsynced();
            return Err(io_err(e));
        }
        self.unsynced += line.len() as u64;
        Ok(())
    }

    /// Sync what was appended since the last sync.
    pub fn sync(&mut self) -> Result<(), EventLogError> {
        if self.unsynced == 0 {
            return Ok(());
        }
        if let Err(e) = self.file.sync_data() {
            self.give_up_unsynced();
            return Err(EventLogError::Io { path: self.path.clone(), source: e });
        }
        self.len += self.unsynced;
        self.unsynced = 0;
        Ok(())
    }

    /// Part of a line may be in the file (a disk that filled mid-write), or all of them without
    /// the sync: none was acknowledged, so none may stay.
    fn give_up_unsynced(&mut self) {
        self.torn = true;
        self.unsynced = 0;
        if let Err(cut) = self.cut_back() {
            tracing::error!("{}: cannot cut the log back to its last record: {cut}", self.path.display());
        }
    }

    /// Cut the file back to its synced records (after a failed append).
    fn cut_back(&mut self) -> io::Result<()> {
        self.file.set_len(self.len)?;
        self.file.sync_all()?;
        self.torn = false;
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Rec {
        seq: u64,
        line: String,
    }

    /// A log in a folder not made yet, inside a `TempDir` removed when the test ends.
    fn temp(name: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::Builder::new().prefix(&format!("bw-log-{name}-")).tempdir().unwrap();
        let path = dir.path().join("log").join("events.jsonl");
        (dir, path)
    }

    #[test]
    fn records_survive_reopening() {
        let (_dir, path) = temp("reopen");
        let (mut log, old) = EventLog::open::<Rec>(&path).unwrap();
        assert!(old.is_empty());
        for seq in 0..3 {
            log.append(&Rec { seq, line: format!("OK {seq}") }).unwrap();
        }
        drop(log);
        let (mut log, old) = EventLog::open::<Rec>(&path).unwrap();
        assert_eq!(old.iter().map(|r| r.seq).collect::<Vec<_>>(), [0, 1, 2]);
        log.append(&Rec { seq: 3, line: "more".into() }).unwrap();
        let (_, all) = EventLog::open::<Rec>(&path).unwrap();
        assert_eq!(all.len(), 4);
    }

    #[test]
    fn a_torn_last_line_is_cut_off() {
        let (_dir, path) = temp("torn");
        let (mut log, _) = EventLog::open::<Rec>(&path).unwrap();
        log.append(&Rec { seq: 0, line: "kept".into() }).unwrap();
        drop(log);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"seq\":1,\"li").unwrap();
        drop(f);
        let (mut log, old) = EventLog::open::<Rec>(&path).unwrap();
        assert_eq!(old, [Rec { seq: 0, line: "kept".into() }]);
        log.append(&Rec { seq: 1, line: "after".into() }).unwrap();
        let (_, all) = EventLog::open::<Rec>(&path).unwrap();
        assert_eq!(all.len(), 2);
    }

    #[test]
    fn a_corrupt_line_in_the_middle_is_an_error_naming_it() {
        let (_dir, path) = temp("corrupt");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{\"seq\":0,\"line\":\"a\"}\ngarbage\n{\"seq\":1,\"line\":\"b\"}\n").unwrap();
        let err = EventLog::open::<Rec>(&path).err().expect("corrupt");
        assert!(err.to_string().contains("line 2"), "{err}");
    }
}
