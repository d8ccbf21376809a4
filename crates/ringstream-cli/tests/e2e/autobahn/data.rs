//! The payloads of sections 12 and 13, made here: Autobahn reads them from
//! files it ships (a JSON file, a bitmap, a German text, an HTML page, a
//! PDF); these are generated stand-ins of the same kinds, deterministic
//! and about 96 KiB each, so that the tests need no files.

use ringstream_testkit::Rng;

/// One data set, and how Autobahn sends it: text data is cut into
/// messages of a number of characters, binary data of bytes.
pub struct TestData {
    pub binary: bool,
    bytes: Vec<u8>,
    /// The byte offset of each character (text only).
    chars: Vec<usize>,
}

const SIZE: usize = 96 * 1024;

impl TestData {
    fn new(binary: bool, bytes: Vec<u8>) -> TestData {
        let chars = match binary {
            true => Vec::new(),
            false => std::str::from_utf8(&bytes)
                .expect("text data is UTF-8")
                .char_indices()
                .map(|(i, _)| i)
                .collect(),
        };
        TestData {
            binary,
            bytes,
            chars,
        }
    }

    /// The next message of `len` units (characters or bytes) from `at`,
    /// wrapping around at the end (Autobahn's `sendOne`); moves `at`.
    pub fn next_message(&self, at: &mut usize, len: usize) -> Vec<u8> {
        let units = if self.binary {
            self.bytes.len()
        } else {
            self.chars.len()
        };
        let offset = |unit: usize| match self.binary {
            true => unit,
            false => self.chars.get(unit).copied().unwrap_or(self.bytes.len()),
        };
        let mut out = Vec::new();
        let mut left = len;
        while left > 0 {
            let take = left.min(units - *at);
            out.extend_from_slice(&self.bytes[offset(*at)..offset(*at + take)]);
            *at = (*at + take) % units;
            left -= take;
        }
        out
    }
}

/// The five data sets of section 12, in Autobahn's order; the first is
/// also section 13's.
pub fn data_sets() -> Vec<TestData> {
    vec![
        // Autobahn's json_data1, lena512, gutenberg_faust, html_data1, ooms.
        TestData::new(false, json()),
        TestData::new(true, bitmap()),
        TestData::new(true, german_text()),
        TestData::new(false, html()),
        TestData::new(true, pdf()),
    ]
}

const WORDS: [&str; 24] = [
    "Faust",
    "Mephistopheles",
    "Gretchen",
    "Nacht",
    "Studierzimmer",
    "Straße",
    "über",
    "Grün",
    "Weisheit",
    "Geist",
    "schön",
    "Wald",
    "Höhle",
    "Erdgeist",
    "Kräfte",
    "und",
    "die",
    "der",
    "ich",
    "nicht",
    "Tragödie",
    "Osterspaziergang",
    "Schüler",
    "→",
];

fn words(rng: &mut Rng, n: usize) -> String {
    (0..n)
        .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize])
        .collect::<Vec<_>>()
        .join(" ")
}

/// JSON records with numbers, booleans, arrays and text.
fn json() -> Vec<u8> {
    let mut rng = Rng(0x6a73_6f6e);
    let mut out = String::from("[\n");
    let mut id = 0;
    while out.len() < SIZE {
        id += 1;
        let tags: Vec<String> = (0..rng.below(4) + 1)
            .map(|_| format!("\"{}\"", words(&mut rng, 1).to_lowercase()))
            .collect();
        out.push_str(&format!(
            "  {{\"id\": {id}, \"name\": \"{}\", \"active\": {}, \"score\": {}.{:02}, \
             \"tags\": [{}], \"text\": \"{}\", \"geo\": {{\"lat\": 52.{}, \"lon\": 13.{}}}}},\n",
            words(&mut rng, 2),
            rng.below(2) == 0,
            rng.below(1000),
            rng.below(100),
            tags.join(", "),
            {
                let n = 8 + rng.below(8) as usize;
                words(&mut rng, n)
            },
            rng.below(100_000),
            rng.below(100_000),
        ));
    }
    out.push_str("  {}\n]\n");
    out.into_bytes()
}

/// A greyscale bitmap: a header, then smooth shading with noise.
fn bitmap() -> Vec<u8> {
    let mut rng = Rng(0x6c65_6e61);
    let mut out = b"BM".to_vec();
    out.extend_from_slice(&(SIZE as u32).to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0, 54, 4, 0, 0, 40, 0, 0, 0]);
    out.resize(1078, 0);
    let width = 512;
    let mut i = 0usize;
    while out.len() < SIZE {
        let (x, y) = ((i % width) as f64, (i / width) as f64);
        let shade = 128.0 + 60.0 * (x / 23.0).sin() + 50.0 * (y / 17.0 + x / 97.0).cos();
        let noise = rng.below(17) as f64 - 8.0;
        out.push((shade + noise).clamp(0.0, 255.0) as u8);
        i += 1;
    }
    out
}

/// Verse-like German text (sent as binary messages, as Autobahn does).
fn german_text() -> Vec<u8> {
    let mut rng = Rng(0x6661_7573);
    let mut out = String::new();
    while out.len() < SIZE {
        let speaker = ["FAUST", "MEPHISTOPHELES", "GRETCHEN", "WAGNER"][rng.below(4) as usize];
        out.push_str(speaker);
        out.push_str(":\n");
        for _ in 0..rng.below(6) + 2 {
            let n = 5 + rng.below(5) as usize;
            let line = words(&mut rng, n);
            out.push_str(&line);
            out.push_str([",\n", ";\n", "!\n", ".\n"][rng.below(4) as usize]);
        }
        out.push('\n');
    }
    out.into_bytes()
}

/// An HTML page of sections, links and tables.
fn html() -> Vec<u8> {
    let mut rng = Rng(0x6874_6d6c);
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"de\">\n<head><meta charset=\"utf-8\">\
         <title>Testseite</title></head>\n<body>\n",
    );
    let mut n = 0;
    while out.len() < SIZE {
        n += 1;
        out.push_str(&format!(
            "<div class=\"section\" id=\"s{n}\">\n  <h2>{}</h2>\n  <p>{} <a href=\"/seite/{}\">{}</a> {}</p>\n  \
             <table><tr><td>{}</td><td>{}</td></tr></table>\n</div>\n",
            words(&mut rng, 3),
            words(&mut rng, 12),
            rng.below(10_000),
            words(&mut rng, 2),
            words(&mut rng, 9),
            rng.below(1_000_000),
            words(&mut rng, 1),
        ));
    }
    out.push_str("</body>\n</html>\n");
    out.into_bytes()
}

/// PDF-like data: text objects between streams of random bytes.
fn pdf() -> Vec<u8> {
    let mut rng = Rng(0x706466);
    let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut n = 0;
    while out.len() < SIZE {
        n += 1;
        let len = 200 + rng.below(1800) as usize;
        out.extend_from_slice(
            format!(
                "{n} 0 obj\n<< /Type /XObject /Subtype /Image /Width {} /Height {} \
                 /Filter /FlateDecode /Length {len} >>\nstream\n",
                rng.below(800),
                rng.below(600)
            )
            .as_bytes(),
        );
        let start = out.len();
        out.resize(start + len, 0);
        rng.fill(&mut out[start..]);
        out.extend_from_slice(b"\nendstream\nendobj\n");
    }
    out
}

#[test]
fn messages_wrap_around_whole_characters() {
    let data = TestData::new(false, "aé→b".as_bytes().to_vec());
    let mut at = 0;
    assert_eq!(data.next_message(&mut at, 3), "aé→".as_bytes());
    assert_eq!(data.next_message(&mut at, 3), "baé".as_bytes());
    assert_eq!(at, 2);
    let data = TestData::new(true, vec![1, 2, 3]);
    let mut at = 2;
    assert_eq!(data.next_message(&mut at, 5), [3, 1, 2, 3, 1]);
}
