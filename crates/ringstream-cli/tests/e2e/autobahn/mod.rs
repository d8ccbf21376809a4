//! The machinery of the Autobahn|Testsuite port: a case is a list of
//! [`Step`]s run by a raw [`Client`](client::Client) against the demo's
//! `/ws/echo`; a section runs its cases at once and reports every failing
//! case id with what went wrong.
//!
//! Close behaviour is checked strictly: where the server must fail the
//! connection it must send a Close with the code RFC 6455 requires and then
//! close the TCP connection ([`Step::ExpectClose`] then
//! [`Step::ExpectEnd`]), and nothing may come between the last expected
//! event and that Close; a clean close must answer the client's Close.

pub mod client;
pub mod data;
pub mod deflate;

use std::net::SocketAddr;
use std::time::Duration;

use tokio::task::JoinSet;
use tokio::time::Instant;

use client::{Chop, Client, End, Event, Frame, Next};

/// How long a case may take, unless it says otherwise.
pub const CASE_DEADLINE: Duration = Duration::from_secs(5);

/// How long the server has to close the TCP connection after the close
/// handshake or its own Close.
const END_WAIT: Duration = Duration::from_secs(2);

/// One thing a case does or expects.
#[derive(Clone, Debug)]
pub enum Step {
    /// Send frames, masked at send time, as the chop says.
    Send(Vec<Frame>, Chop),
    /// Send bytes as they are (a frame split across sends, say).
    Raw(Vec<u8>, Chop),
    /// Send a data message (compressed when permessage-deflate was
    /// negotiated) in fragments of at most `fragment` bytes (`0`: one
    /// frame).
    Message {
        text: bool,
        payload: Vec<u8>,
        fragment: usize,
        chop: Chop,
    },
    /// Pause.
    Wait(Duration),
    /// The next event is this one.
    Expect(Event),
    /// Nothing arrives for this long, and the connection stays open.
    Quiet(Duration),
    /// The next event is the server's Close, with one of these codes
    /// (`None`: a Close without a code), within `within`; `context` says
    /// what it must come before, for the failure message.
    ExpectClose {
        codes: Vec<Option<u16>>,
        within: Duration,
        context: &'static str,
    },
    /// The server closes the TCP connection, and sends nothing more.
    ExpectEnd,
}

impl Step {
    /// Send one frame in one write.
    pub fn send(frame: Frame) -> Step {
        Step::Send(vec![frame], Chop::Whole)
    }

    pub fn expect_text(payload: impl Into<Vec<u8>>) -> Step {
        Step::Expect(Event::Text(payload.into()))
    }

    pub fn expect_binary(payload: impl Into<Vec<u8>>) -> Step {
        Step::Expect(Event::Binary(payload.into()))
    }

    pub fn expect_pong(payload: impl Into<Vec<u8>>) -> Step {
        Step::Expect(Event::Pong(payload.into()))
    }

    /// The server's Close with `code`.
    pub fn expect_close(code: u16) -> Step {
        Step::expect_close_of(&[Some(code)])
    }

    pub fn expect_close_of(codes: &[Option<u16>]) -> Step {
        Step::ExpectClose {
            codes: codes.to_vec(),
            within: CASE_DEADLINE,
            context: "",
        }
    }
}

/// One case: its Autobahn id, its steps, and the permessage-deflate offer
/// of its handshake.
#[derive(Clone, Debug)]
pub struct Case {
    pub id: String,
    pub offer: Option<String>,
    pub steps: Vec<Step>,
    pub deadline: Duration,
}

impl Case {
    pub fn new(id: impl Into<String>, steps: Vec<Step>) -> Case {
        Case {
            id: id.into(),
            offer: None,
            steps,
            deadline: CASE_DEADLINE,
        }
    }

    /// A case the client ends: `steps`, then a Close 1000 that the server
    /// must echo before it closes the connection.
    pub fn clean(id: impl Into<String>, mut steps: Vec<Step>) -> Case {
        steps.push(Step::send(Frame::close(1000, b"")));
        steps.push(Step::expect_close(1000));
        steps.push(Step::ExpectEnd);
        Case::new(id, steps)
    }

    /// A case the server must fail: `steps` (what to send and the events
    /// expected before the failure), then its Close with `code` and the end
    /// of the connection, with nothing in between.
    pub fn failed(id: impl Into<String>, mut steps: Vec<Step>, code: u16) -> Case {
        steps.push(Step::expect_close(code));
        steps.push(Step::ExpectEnd);
        Case::new(id, steps)
    }

    pub fn offer(mut self, offer: &str) -> Case {
        self.offer = Some(offer.to_owned());
        self
    }

    pub fn deadline(mut self, deadline: Duration) -> Case {
        self.deadline = deadline;
        self
    }
}

/// A stable seed for a case's random keys, from its id.
fn seed(id: &str) -> u64 {
    id.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Runs one case; `Err` says what went wrong.
pub async fn run_case(addr: SocketAddr, case: &Case) -> Result<(), String> {
    let deadline = Instant::now() + case.deadline;
    match tokio::time::timeout_at(deadline, steps(addr, case, deadline)).await {
        Ok(result) => result,
        Err(_) => Err(format!(
            "did not finish within {:?} (case deadline)",
            case.deadline
        )),
    }
}

async fn steps(addr: SocketAddr, case: &Case, deadline: Instant) -> Result<(), String> {
    let mut client = Client::connect(addr, case.offer.as_deref(), seed(&case.id)).await?;
    if case.offer.is_some() && client.deflate.is_none() {
        return Err(format!(
            "permessage-deflate was offered ({:?}) but not accepted",
            case.offer
        ));
    }
    for (i, step) in case.steps.iter().enumerate() {
        run_step(&mut client, i + 1, step, deadline)
            .await
            .map_err(|e| match &client.write_failed {
                Some(w) => format!("{e} (a write had failed: {w})"),
                None => e,
            })?;
    }
    Ok(())
}

async fn run_step(
    client: &mut Client,
    n: usize,
    step: &Step,
    deadline: Instant,
) -> Result<(), String> {
    let left = deadline.saturating_duration_since(Instant::now());
    match step {
        Step::Send(frames, chop) => client.send_frames(frames, *chop).await,
        Step::Raw(bytes, chop) => client.write(bytes, *chop).await,
        Step::Message {
            text,
            payload,
            fragment,
            chop,
        } => client.send_message(*text, payload, *fragment, *chop).await,
        Step::Wait(d) => tokio::time::sleep(*d).await,
        Step::Expect(expected) => match client.next(left).await? {
            Next::Event(got) if &got == expected => {}
            Next::Event(got) => {
                return Err(format!("step {n}: expected {expected:?}, got {got:?}"))
            }
            Next::End(end) => {
                return Err(format!(
                    "step {n}: expected {expected:?}, the connection ended ({end:?})"
                ))
            }
            Next::Timeout => return Err(format!("step {n}: expected {expected:?}, got nothing")),
        },
        Step::Quiet(d) => match client.next(*d).await? {
            Next::Timeout => {}
            Next::Event(got) => {
                return Err(format!(
                    "step {n}: expected nothing for {d:?} (the data so far is valid), got {got:?}"
                ))
            }
            Next::End(end) => {
                return Err(format!(
                    "step {n}: expected nothing for {d:?} (the data so far is valid), \
                     the connection ended ({end:?})"
                ))
            }
        },
        Step::ExpectClose {
            codes,
            within,
            context,
        } => {
            let codes_text = codes
                .iter()
                .map(|c| c.map_or("no code".into(), |c| c.to_string()))
                .collect::<Vec<_>>()
                .join(" or ");
            let what = if context.is_empty() {
                format!("step {n}: expected close {codes_text}")
            } else {
                format!("expected close {codes_text} before {context}")
            };
            match client.next(left.min(*within)).await? {
                Next::Event(Event::Close(code, _)) if codes.contains(&code) => {}
                Next::Event(got) => return Err(format!("{what}, got {got:?}")),
                Next::End(end) => {
                    return Err(format!(
                        "{what}, the connection ended without a Close ({end:?})"
                    ))
                }
                Next::Timeout => {
                    return Err(format!(
                        "{what}, got nothing within {:?}",
                        left.min(*within)
                    ))
                }
            }
        }
        Step::ExpectEnd => match client.next(left.min(END_WAIT)).await? {
            Next::End(End::Eof | End::Error(_)) => {}
            Next::Event(got) => {
                return Err(format!(
                    "step {n}: expected the end of the connection after the Close, got {got:?}"
                ))
            }
            Next::Timeout => {
                return Err(format!(
                    "step {n}: the server did not close the TCP connection within {END_WAIT:?} \
                     after the Close"
                ))
            }
        },
    }
    Ok(())
}

/// Runs `cases` at once against `addr` and checks the outcome against
/// `known_failures` (ids of cases expected to fail, each with the reason in
/// a comment where it is listed): a failing case not in the list, or a
/// listed case that passes, fails the section with a report of all of
/// them. Returns how many cases ran.
pub async fn run_section(
    section: &str,
    addr: SocketAddr,
    cases: Vec<Case>,
    known_failures: &[&str],
    parallel: usize,
) -> usize {
    let mut ids = std::collections::HashSet::new();
    for case in &cases {
        assert!(ids.insert(case.id.clone()), "case {} twice", case.id);
    }
    for id in known_failures {
        assert!(ids.contains(*id), "known failure {id} is no case");
    }
    let count = cases.len();
    let started = Instant::now();
    let mut set = JoinSet::new();
    let mut results = Vec::new();
    for (order, case) in cases.into_iter().enumerate() {
        if set.len() >= parallel {
            if let Some(joined) = set.join_next().await {
                results.push(joined.expect("case task"));
            }
        }
        set.spawn(async move {
            let started = Instant::now();
            let result = run_case(addr, &case).await;
            if std::env::var_os("AUTOBAHN_TIMES").is_some() {
                eprintln!("{}: {:?}", case.id, started.elapsed());
            }
            (order, case.id, result)
        });
    }
    while let Some(joined) = set.join_next().await {
        results.push(joined.expect("case task"));
    }
    results.sort_by_key(|(order, _, _)| *order);
    let mut report = Vec::new();
    for (_, id, result) in &results {
        let known = known_failures.contains(&id.as_str());
        match (result, known) {
            (Ok(()), false) | (Err(_), true) => {}
            (Err(e), false) => report.push(format!("{id}: {e}")),
            (Ok(()), true) => report.push(format!(
                "{id}: passes but is listed as a known failure: take it off the list"
            )),
        }
    }
    eprintln!(
        "Autobahn section {section}: {count} cases, {} known failures, {:?}",
        known_failures.len(),
        started.elapsed()
    );
    assert!(
        report.is_empty(),
        "Autobahn section {section}: {} of {count} cases wrong:\n{}",
        report.len(),
        report.join("\n")
    );
    count
}

/// `unit` repeated to `len` bytes (Autobahn's `payload_len`).
pub fn repeated(unit: &[u8], len: usize) -> Vec<u8> {
    unit.iter().copied().cycle().take(len).collect()
}
