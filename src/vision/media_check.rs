//! Checks of image and video files made before OpenCV sees them, so that a damaged or hostile
//! file gets an error a user can act on instead of OpenCV's assertion text:
//!
//! - a PNG or JPEG whose header claims an absurd size (`100000x100000`) is refused before it is
//!   decoded (decoding would try to allocate tens of gigabytes first);
//! - an MP4/MOV that OpenCV cannot open is looked into: without its index (the `moov` box,
//!   which a recorder writes only when it stops) it is a recording cut off by a crash or a full
//!   card, and the message says so and what can be done.
//!
//! The parsing works on bytes and readers, so it is tested without files.

use std::io::{self, Read, Seek, SeekFrom};

/// Images larger than this are refused before decoding: 250 megapixels is beyond any camera
/// that watches a board (a 200-megapixel phone photo still passes) and needs 750 MB decoded.
pub const MAX_IMAGE_PIXELS: u64 = 250_000_000;
/// Neither JPEG nor OpenCV's decoders take a side longer than this.
pub const MAX_IMAGE_SIDE: u64 = 65_535;

/// How many bytes of an image [`image_header_size`] needs at most: the JPEG frame header can
/// come after large EXIF and ICC segments.
pub const IMAGE_HEADER_BYTES: usize = 1 << 20;

/// The format and the width and height that the header of a PNG or JPEG image claims, from the
/// first bytes of the file; `None` for other formats, or when the header is not in `bytes`.
pub fn image_header_size(bytes: &[u8]) -> Option<(&'static str, u64, u64)> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        // The first chunk is IHDR: length, "IHDR", width, height (big-endian).
        if bytes.get(12..16)? != b"IHDR" {
            return None;
        }
        let width = u32::from_be_bytes(bytes.get(16..20)?.try_into().ok()?);
        let height = u32::from_be_bytes(bytes.get(20..24)?.try_into().ok()?);
        return Some(("PNG", u64::from(width), u64::from(height)));
    }
    if bytes.starts_with(&[0xFF, 0xD8]) {
        return jpeg_frame_size(bytes).map(|(w, h)| ("JPEG", w, h));
    }
    None
}

/// The size in the first frame header (SOFn) of a JPEG, walking its segments.
fn jpeg_frame_size(b: &[u8]) -> Option<(u64, u64)> {
    let mut i = 2;
    loop {
        // Markers may be padded with extra 0xFF bytes.
        while *b.get(i)? == 0xFF && *b.get(i + 1)? == 0xFF {
            i += 1;
        }
        if *b.get(i)? != 0xFF {
            return None;
        }
        let marker = *b.get(i + 1)?;
        match marker {
            // Markers without a length: restart markers, start of image, TEM.
            0xD0..=0xD8 | 0x01 => i += 2,
            // End of image or start of scan before any frame header: no size to read.
            0xD9 | 0xDA => return None,
            _ => {
                let len = usize::from(u16::from_be_bytes([*b.get(i + 2)?, *b.get(i + 3)?]));
                // SOF0..SOF15, except DHT (C4), JPG (C8) and DAC (CC).
                if (0xC0..=0xCF).contains(&marker) && !matches!(marker, 0xC4 | 0xC8 | 0xCC) {
                    let height = u16::from_be_bytes([*b.get(i + 5)?, *b.get(i + 6)?]);
                    let width = u16::from_be_bytes([*b.get(i + 7)?, *b.get(i + 8)?]);
                    return Some((u64::from(width), u64::from(height)));
                }
                if len < 2 {
                    return None;
                }
                i += 2 + len;
            }
        }
    }
}

/// Why an image with this header must not be decoded, if it must not.
pub fn refuse_image_size(format: &str, width: u64, height: u64) -> Option<String> {
    let pixels = width.saturating_mul(height);
    if width == 0 || height == 0 {
        return Some(format!("the {format} header claims {width}x{height} pixels: a damaged file"));
    }
    if pixels > MAX_IMAGE_PIXELS || width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE {
        return Some(format!(
            "the {format} header claims {width}x{height} pixels ({} megapixels); images above {} \
             megapixels or {MAX_IMAGE_SIDE} pixels a side are refused before decoding (a damaged \
             file, or not a photo of a board)",
            pixels / 1_000_000,
            MAX_IMAGE_PIXELS / 1_000_000
        ));
    }
    None
}

/// What the top level of an ISO media file (MP4, MOV, 3GP) holds, as far as a diagnosis needs.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Mp4Layout {
    /// The four-character types of the top-level boxes, in order.
    pub boxes: Vec<String>,
    /// The last box claims to run past the end of the file: writing stopped inside it.
    pub cut_inside_a_box: bool,
}

impl Mp4Layout {
    /// Whether the frames are there (an `mdat` box) but their index (`moov`) is not: a
    /// recording whose writer never finished it.
    pub fn lacks_index(&self) -> bool {
        let has = |t: &str| self.boxes.iter().any(|b| b == t);
        has("mdat") && !has("moov")
    }
}

/// The top-level boxes of `file` when it starts like an ISO media file (an `ftyp`, or a
/// QuickTime file's first box); `None` when it does not.
pub fn mp4_layout<R: Read + Seek>(file: &mut R) -> io::Result<Option<Mp4Layout>> {
    let len = file.seek(SeekFrom::End(0))?;
    let mut at = 0u64;
    let mut layout = Mp4Layout::default();
    while at + 8 <= len {
        file.seek(SeekFrom::Start(at))?;
        let mut head = [0u8; 16];
        let got = read_up_to(file, &mut head)?;
        let size32 = u64::from(u32::from_be_bytes([head[0], head[1], head[2], head[3]]));
        let kind = &head[4..8];
        if !kind.iter().all(|c| c.is_ascii_alphanumeric() || *c == b' ') {
            break;
        }
        let kind = String::from_utf8_lossy(kind).into_owned();
        if layout.boxes.is_empty() && !matches!(kind.as_str(), "ftyp" | "wide" | "free" | "skip" | "mdat" | "moov") {
            return Ok(None);
        }
        let size = match size32 {
            0 => len - at, // the box runs to the end of the file
            1 if got >= 16 => u64::from_be_bytes(head[8..16].try_into().unwrap_or_default()),
            n => n,
        };
        layout.boxes.push(kind);
        if size < 8 {
            break;
        }
        if at + size > len {
            layout.cut_inside_a_box = true;
            break;
        }
        at += size;
    }
    Ok((!layout.boxes.is_empty()).then_some(layout))
}

fn read_up_to<R: Read>(file: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// The message for an MP4 that lacks its index: what happened, and what can and cannot help.
pub fn truncated_mp4_message(layout: &Mp4Layout) -> String {
    let cut = if layout.cut_inside_a_box { " and ends inside a box," } else { "" };
    format!(
        "a truncated or unfinished MP4: it has frames but no index (no 'moov' box){cut} because \
         the recorder stopped before finishing the file (a crash, a full card, a pulled cable). \
         Copying it into another container (`ffmpeg -i broken.mp4 -c copy fixed.mkv`) does not \
         help without the index; a repair tool of the untrunc kind can rebuild the index from a \
         good recording made with the same camera and settings. To make recordings that survive \
         a crash, record to Matroska (.mkv) or to fragmented MP4 (ffmpeg \
         `-movflags frag_keyframe+empty_moov`)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn png_header(width: u32, height: u32) -> Vec<u8> {
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        b.extend(width.to_be_bytes());
        b.extend(height.to_be_bytes());
        b.extend([8, 2, 0, 0, 0]);
        b
    }

    fn jpeg_header(width: u16, height: u16) -> Vec<u8> {
        let mut b = vec![0xFF, 0xD8];
        // An APP0 segment, padding, then SOF2 (progressive).
        b.extend([0xFF, 0xE0, 0, 6, b'J', b'F', b'I', b'F']);
        b.extend([0xFF, 0xFF, 0xC2, 0, 11, 8]);
        b.extend(height.to_be_bytes());
        b.extend(width.to_be_bytes());
        b.extend([1, 1, 0x11, 0]);
        b
    }

    #[test]
    fn image_headers_give_their_size() {
        assert_eq!(image_header_size(&png_header(100_000, 100_000)), Some(("PNG", 100_000, 100_000)));
        assert_eq!(image_header_size(&jpeg_header(4000, 3000)), Some(("JPEG", 4000, 3000)));
        assert_eq!(image_header_size(&png_header(640, 480)[..20]), None);
        assert_eq!(image_header_size(b"GIF89a"), None);
        assert_eq!(image_header_size(&[0xFF, 0xD8, 0xFF, 0xDA, 0, 2]), None);
    }

    #[test]
    fn absurd_sizes_are_refused_and_ordinary_ones_pass() {
        let why = refuse_image_size("PNG", 100_000, 100_000).unwrap();
        assert!(why.contains("100000x100000") && why.contains("10000 megapixels"), "{why}");
        assert!(refuse_image_size("JPEG", 0, 480).is_some());
        assert!(refuse_image_size("PNG", 70_000, 10).is_some());
        assert_eq!(refuse_image_size("JPEG", 16_320, 12_240), None);
        assert_eq!(refuse_image_size("PNG", 640, 480), None);
    }

    fn mp4_box(kind: &[u8; 4], body: usize) -> Vec<u8> {
        let mut b = ((8 + body) as u32).to_be_bytes().to_vec();
        b.extend(kind);
        b.extend(std::iter::repeat(0u8).take(body));
        b
    }

    #[test]
    fn an_mp4_without_its_index_is_recognised() {
        let mut whole = mp4_box(b"ftyp", 24);
        whole.extend(mp4_box(b"free", 0));
        whole.extend(mp4_box(b"mdat", 5000));
        whole.extend(mp4_box(b"moov", 300));
        let layout = mp4_layout(&mut Cursor::new(&whole)).unwrap().unwrap();
        assert_eq!(layout.boxes, ["ftyp", "free", "mdat", "moov"]);
        assert!(!layout.lacks_index() && !layout.cut_inside_a_box);

        let half = &whole[..whole.len() / 2];
        let layout = mp4_layout(&mut Cursor::new(half)).unwrap().unwrap();
        assert_eq!(layout.boxes, ["ftyp", "free", "mdat"]);
        assert!(layout.lacks_index() && layout.cut_inside_a_box);
        let message = truncated_mp4_message(&layout);
        assert!(message.contains("truncated") && message.contains("frag_keyframe+empty_moov"), "{message}");

        // Not ISO media at all; an empty file.
        assert_eq!(mp4_layout(&mut Cursor::new(b"RIFF\0\0\0\0AVI LIST")).unwrap(), None);
        assert_eq!(mp4_layout(&mut Cursor::new(b"")).unwrap(), None);
    }
}
