//! Board states from a file of JSON lines (`boardwatch track`'s input format): for tests, and
//! for recognisers other than ours.

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

use super::{BoardSource, Picture, SourceInput, SourceItem};
use crate::daemon::stop::StopSignal;
use crate::tracker::{parse_input_line, Input};
use crate::vision::board_diagram_jpeg;

/// Board states from a file of JSON lines (`boardwatch track` input), one every `pace`.
/// With `follow`, the end of the file is not the end: lines appended later are read as they come
/// (as `tail -f`), which lets another program or a test play a game into a running daemon.
pub struct ObservationFile {
    path: PathBuf,
    pace: Duration,
    follow: bool,
    reader: Option<BufReader<File>>,
    /// Lines read so far (the cursor of the last line).
    line_number: u64,
    /// Lines up to this one were recorded before a restart.
    skip_through: u64,
    /// A line written only in part (no newline yet) while following.
    partial: String,
    delivered_any: bool,
}

impl ObservationFile {
    pub fn new(path: PathBuf, pace: Duration, follow: bool) -> ObservationFile {
        ObservationFile {
            path,
            pace,
            follow,
            reader: None,
            line_number: 0,
            skip_through: 0,
            partial: String::new(),
            delivered_any: false,
        }
    }

    /// The next complete line, or `None` at the end of the file (for now, when following).
    fn read_line(&mut self) -> anyhow::Result<Option<String>> {
        let reader = self.reader.as_mut().context("the file is not open")?;
        let mut chunk = String::new();
        let read = reader.read_line(&mut chunk).with_context(|| format!("reading {}", self.path.display()))?;
        if read == 0 {
            return Ok(None);
        }
        self.partial.push_str(&chunk);
        // While following, a line without its newline is still being written; the last line of
        // a finished file needs none.
        if !self.partial.ends_with('\n') && self.follow {
            return Ok(None);
        }
        self.line_number += 1;
        Ok(Some(std::mem::take(&mut self.partial)))
    }
}

impl BoardSource for ObservationFile {
    fn describe(&self) -> String {
        format!("observations {}", self.path.display())
    }

    fn open(&mut self) -> anyhow::Result<()> {
        let file = File::open(&self.path).with_context(|| format!("opening {}", self.path.display()))?;
        let mut reader = BufReader::new(file);
        reader.seek(SeekFrom::Start(0))?;
        self.reader = Some(reader);
        self.line_number = 0;
        self.partial.clear();
        Ok(())
    }

    fn resume_after(&mut self, cursor: u64) {
        self.skip_through = cursor;
    }

    fn next(&mut self, stop: &StopSignal) -> anyhow::Result<Option<SourceItem>> {
        loop {
            let Some(line) = self.read_line()? else {
                if !self.follow {
                    return Ok(None);
                }
                if stop.sleep(Duration::from_millis(50)) {
                    return Ok(None);
                }
                continue;
            };
            if self.line_number <= self.skip_through || line.trim().is_empty() {
                continue;
            }
            // The pace is the time between board states, as a camera would see them come.
            if self.delivered_any && stop.sleep(self.pace) {
                return Ok(None);
            }
            self.delivered_any = true;
            let cursor = Some(self.line_number);
            let where_ = format!("{}: line {}", self.path.display(), self.line_number);
            let item = match parse_input_line(&line) {
                Ok(Input::Observation(obs)) => SourceItem {
                    picture: board_diagram_jpeg(&obs.to_grid()).ok().map(Picture::from),
                    input: Some(SourceInput::Tracker(Input::Observation(obs))),
                    cursor,
                    ..SourceItem::default()
                },
                Ok(command @ Input::Command(_)) => {
                    SourceItem { input: Some(SourceInput::Tracker(command)), cursor, ..SourceItem::default() }
                }
                // A bad line is a bad frame: reported, and the file goes on.
                Err(e) => SourceItem { cursor, warnings: vec![format!("{where_}: {e}")], ..SourceItem::default() },
            };
            return Ok(Some(item));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracker::Command;
    use std::io::Write;

    const START: &str = r#"{"grid":[".b.b.b.b","b.b.b.b.",".b.b.b.b","........","........","w.w.w.w.",".w.w.w.w","w.w.w.w."]}"#;

    /// The file and the folder holding it, removed when the `TempDir` is dropped.
    fn temp_file(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::Builder::new().prefix(&format!("bw-source-{name}-")).tempdir().unwrap();
        let path = dir.path().join("obs.jsonl");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    fn drain(source: &mut ObservationFile) -> Vec<SourceItem> {
        let stop = StopSignal::new();
        let mut items = Vec::new();
        while let Some(item) = source.next(&stop).unwrap() {
            items.push(item);
        }
        items
    }

    #[test]
    fn reads_observations_commands_and_reports_bad_lines() {
        let (_dir, path) = temp_file("read", &format!("{START}\n\n{{\"op\":\"back\"}}\nnot json\n{START}"));
        let mut source = ObservationFile::new(path, Duration::ZERO, false);
        assert!(source.next(&StopSignal::new()).is_err(), "not opened yet");
        source.open().unwrap();
        let items = drain(&mut source);
        assert_eq!(items.iter().map(|i| i.cursor.unwrap()).collect::<Vec<_>>(), [1, 3, 4, 5]);
        assert!(matches!(items[0].input, Some(SourceInput::Tracker(Input::Observation(_)))));
        assert!(items[0].picture.as_ref().is_some_and(|p| p.starts_with(&[0xff, 0xd8])), "a JPEG");
        assert!(matches!(items[1].input, Some(SourceInput::Tracker(Input::Command(Command::Back)))));
        assert!(items[2].input.is_none());
        assert!(items[2].warnings[0].contains("obs.jsonl: line 4: "), "{:?}", items[2].warnings);
        assert!(matches!(items[3].input, Some(SourceInput::Tracker(Input::Observation(_)))), "no newline at the end");
    }

    #[test]
    fn resumes_after_the_recorded_line() {
        let (_dir, path) = temp_file("resume", &format!("{START}\n{START}\n{{\"op\":\"draw\"}}\n"));
        let mut source = ObservationFile::new(path, Duration::ZERO, false);
        source.resume_after(2);
        source.open().unwrap();
        let items = drain(&mut source);
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].cursor, Some(3));
    }

    #[test]
    fn following_reads_lines_appended_later_and_waits_for_whole_lines() {
        let (_dir, path) = temp_file("follow", &format!("{START}\n"));
        let mut source = ObservationFile::new(path.clone(), Duration::ZERO, true);
        source.open().unwrap();
        let stop = StopSignal::new();
        assert_eq!(source.next(&stop).unwrap().unwrap().cursor, Some(1));
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"{\"op\":").unwrap();
        file.flush().unwrap();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            file.write_all(b"\"clear\"}\n").unwrap();
        });
        let item = source.next(&stop).unwrap().unwrap();
        assert!(matches!(item.input, Some(SourceInput::Tracker(Input::Command(Command::Clear)))));
        writer.join().unwrap();
        let stopper = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            stopper.stop();
        });
        assert!(source.next(&stop).unwrap().is_none(), "stop ends the wait");
    }

    #[test]
    fn a_missing_file_is_named() {
        let mut source = ObservationFile::new("/nonexistent-bw/obs.jsonl".into(), Duration::ZERO, false);
        let err = format!("{:#}", source.open().unwrap_err());
        assert!(err.contains("opening /nonexistent-bw/obs.jsonl: No such file"), "{err}");
    }
}
