//! When a socket's bytes arrived, from the kernel rather than from when user space read them.
//!
//! Under load the client parses events milliseconds after they arrived (one engine step can
//! release a thousand events at once, and they are parsed one after another). On Linux a TCP
//! socket with `SO_TIMESTAMPNS` hands every `recvmsg` the CLOCK_REALTIME instant the kernel
//! received the newest segment that read copied (on loopback: in the sender's write), which no
//! parsing backlog can move.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the driver's event instants are taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventClock {
    /// The kernel's receive timestamp of the bytes that completed the event.
    KernelReceive,
    /// `Instant::now()` when the event was parsed (no kernel timestamp on this connection).
    Parse,
}

impl EventClock {
    /// The report's spelling (`ClientHealth::event_clock`).
    pub fn id(self) -> &'static str {
        match self {
            EventClock::KernelReceive => "kernel_receive",
            EventClock::Parse => "parse",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            EventClock::KernelReceive => "kernel receive timestamp (SO_TIMESTAMPNS)",
            EventClock::Parse => "parse time (Instant::now when the event was parsed)",
        }
    }
}

/// `event_clock` of a level whose requests were stamped by both clocks.
pub const MIXED_CLOCKS: &str = "mixed";

/// How many of a level's requests had their events stamped by each clock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClockCounts {
    pub kernel_receive: u64,
    pub parse: u64,
}

impl ClockCounts {
    pub fn add(&mut self, clock: EventClock) {
        match clock {
            EventClock::KernelReceive => self.kernel_receive += 1,
            EventClock::Parse => self.parse += 1,
        }
    }

    pub fn merge(self, other: ClockCounts) -> ClockCounts {
        ClockCounts {
            kernel_receive: self.kernel_receive + other.kernel_receive,
            parse: self.parse + other.parse,
        }
    }

    /// The report's value: one clock's id, [`MIXED_CLOCKS`], or `None` when no request was
    /// timed.
    pub fn summary(self) -> Option<&'static str> {
        match (self.kernel_receive, self.parse) {
            (0, 0) => None,
            (_, 0) => Some(EventClock::KernelReceive.id()),
            (0, _) => Some(EventClock::Parse.id()),
            _ => Some(MIXED_CLOCKS),
        }
    }
}

/// The receive timestamp of one connection's latest read, shared between the socket and the
/// driver reading the response body.
#[derive(Debug, Clone, Default)]
pub struct ArrivalClock(Arc<AtomicU64>);

impl ArrivalClock {
    /// Stores the latest read's timestamp (CLOCK_REALTIME ns); `None` forgets the previous one,
    /// so a read without a timestamp never inherits an older read's.
    pub fn record(&self, realtime_ns: Option<u64>) {
        self.0.store(realtime_ns.unwrap_or(0), Ordering::Release);
    }

    /// When the bytes read last arrived, as an `Instant` no later than now; `None` when that
    /// read carried no timestamp.
    #[cfg(test)]
    pub fn last_arrival(&self) -> Option<Instant> {
        self.last_arrival_before(Instant::now())
    }

    /// [`ArrivalClock::last_arrival`] given the monotonic clock's `now` (read just before).
    pub fn last_arrival_before(&self, now: Instant) -> Option<Instant> {
        let kernel_ns = self.0.load(Ordering::Acquire);
        (kernel_ns != 0).then(|| to_instant(kernel_ns, now, realtime_ns()))
    }
}

/// `clock` now, nanoseconds (CLOCK_REALTIME: since the epoch).
pub fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own; callers pass clocks that exist.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_REALTIME now, nanoseconds since the epoch: the kernel's receive timestamps' clock.
pub fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

/// A past CLOCK_REALTIME reading as an `Instant`, through the paired readings `now` and
/// `realtime_now_ns`. Converting at the moment of use means a clock step only matters if it
/// falls inside the (sub-millisecond) age; a stamp in the future counts as now.
pub fn to_instant(kernel_ns: u64, now: Instant, realtime_now_ns: u64) -> Instant {
    let age = Duration::from_nanos(realtime_now_ns.saturating_sub(kernel_ns));
    now.checked_sub(age).unwrap_or(now)
}

/// Keeps the kernel's receive timestamping on for the life of the process.
///
/// Linux switches it on system-wide when the first socket asks and off when the last one
/// closes, both deferred to a work queue, so a connection opened while it is off can get its
/// first bytes unstamped (llama.cpp closes every connection). One idle socket holding the
/// option keeps it on.
#[cfg(target_os = "linux")]
pub fn keep_enabled() {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    static ANCHOR: std::sync::OnceLock<Option<OwnedFd>> = std::sync::OnceLock::new();
    ANCHOR.get_or_init(|| {
        // SAFETY: plain socket(2); a valid fd is owned from here on.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return None;
        }
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        enable(fd.as_raw_fd()).ok().map(|()| fd)
    });
}

#[cfg(not(target_os = "linux"))]
pub fn keep_enabled() {}

/// Asks the kernel to timestamp every read on `fd`.
#[cfg(target_os = "linux")]
pub fn enable(fd: RawFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: `on` outlives the call and its size is passed with it.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
pub fn enable(_fd: RawFd) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "SO_TIMESTAMPNS needs Linux",
    ))
}

/// One non-blocking read into `buf`: the byte count and, when the kernel sent one, the receive
/// timestamp (CLOCK_REALTIME ns) of the newest segment copied.
#[cfg(target_os = "linux")]
pub fn recv(fd: RawFd, buf: &mut [MaybeUninit<u8>]) -> io::Result<(usize, Option<u64>)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // u64s keep the buffer aligned for cmsghdr; 64 bytes hold one timespec message.
    let mut control = [0u64; 8];
    // SAFETY: an all-zero msghdr is valid (no name, no buffers) before we point it at ours.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: msg points at iov (into `buf`) and `control`, which outlive the call.
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((n as usize, timestamp(&msg)))
}

#[cfg(not(target_os = "linux"))]
pub fn recv(fd: RawFd, buf: &mut [MaybeUninit<u8>]) -> io::Result<(usize, Option<u64>)> {
    // SAFETY: recv writes at most buf.len() bytes into buf.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((n as usize, None))
}

/// The `SCM_TIMESTAMPNS` control message of a completed `recvmsg`, if any.
#[cfg(target_os = "linux")]
fn timestamp(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY: the kernel filled msg_control with well-formed cmsghdrs up to msg_controllen,
    // and the CMSG_* macros stay inside it; the payload may be unaligned, so it is copied out.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_TIMESTAMPNS
            {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast());
                return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            cmsg = libc::CMSG_NXTHDR(msg, cmsg);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        (client, server)
    }

    /// Blocks until `fd` has data, then reads it with its timestamp.
    fn read(stream: &TcpStream) -> (Vec<u8>, Option<u64>) {
        let mut buf = [MaybeUninit::<u8>::uninit(); 256];
        let mut poll = libc::pollfd {
            fd: stream.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        assert_eq!(unsafe { libc::poll(&mut poll, 1, 5_000) }, 1);
        let (n, ts) = recv(stream.as_raw_fd(), &mut buf).unwrap();
        // SAFETY: recv initialised the first n bytes.
        let bytes = buf[..n]
            .iter()
            .map(|b| unsafe { b.assume_init() })
            .collect();
        (bytes, ts)
    }

    /// A pair whose client reads are timestamped. Linux turns timestamping on asynchronously
    /// the first time, so this waits until a read carries a stamp.
    #[cfg(target_os = "linux")]
    fn stamped_pair() -> (TcpStream, TcpStream) {
        keep_enabled();
        let (client, mut server) = pair();
        enable(client.as_raw_fd()).unwrap();
        for _ in 0..200 {
            server.write_all(b".").unwrap();
            if read(&client).1.is_some() {
                return (client, server);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("no read carried a receive timestamp within 2 s");
    }

    /// An `Instant` and a CLOCK_REALTIME reading taken together: a pair split by a preemption
    /// (a loaded CI machine) shifts the converted stamp early by the preemption's length, which
    /// is the test machine's noise, not the conversion's error.
    #[cfg(target_os = "linux")]
    fn tight_pair() -> (Instant, u64) {
        loop {
            let before = realtime_ns();
            let at = Instant::now();
            if realtime_ns().saturating_sub(before) < 20_000 {
                return (at, before);
            }
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn kernel_timestamp_is_the_arrival_not_the_read() {
        let (client, mut server) = stamped_pair();
        // Paired CLOCK_REALTIME/MONOTONIC readings and NTP slew blur the conversion slightly.
        let slack = Duration::from_micros(200);
        for _ in 0..3 {
            let writing = Instant::now();
            server.write_all(b"data: {}\n\n").unwrap();
            let written = Instant::now();
            std::thread::sleep(Duration::from_millis(50));
            let (bytes, ts) = read(&client);
            let (read_at, realtime_at) = tight_pair();
            assert_eq!(bytes, b"data: {}\n\n");
            let arrived = to_instant(ts.expect("a timestamp"), read_at, realtime_at);
            // On loopback the segment is stamped inside the sender's write, 50 ms before the
            // read: the stamp is the arrival, not the read.
            assert!(arrived + slack >= writing, "{:?} early", writing - arrived);
            assert!(arrived <= written + slack, "{:?} late", arrived - written);
            assert!(read_at - arrived >= Duration::from_millis(50) - slack);
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn one_read_of_two_writes_carries_the_later_arrival() {
        let (client, mut server) = stamped_pair();
        server.write_all(b"a").unwrap();
        std::thread::sleep(Duration::from_millis(30));
        let second = Instant::now();
        server.write_all(b"b").unwrap();
        std::thread::sleep(Duration::from_millis(30));
        let (bytes, ts) = read(&client);
        let (now, realtime_now) = tight_pair();
        let arrived = to_instant(ts.expect("a timestamp"), now, realtime_now);
        assert_eq!(bytes, b"ab");
        let slack = Duration::from_micros(200);
        assert!(arrived + slack >= second, "{:?} early", second - arrived);
    }

    #[test]
    fn without_the_option_reads_carry_no_timestamp() {
        let (client, mut server) = pair();
        server.write_all(b"x").unwrap();
        assert_eq!(read(&client), (b"x".to_vec(), None));
    }

    #[test]
    fn clock_counts_name_one_clock_or_say_mixed() {
        let mut counts = ClockCounts::default();
        assert_eq!(counts.summary(), None);
        counts.add(EventClock::KernelReceive);
        assert_eq!(counts.summary(), Some("kernel_receive"));
        let parse = ClockCounts {
            kernel_receive: 0,
            parse: 2,
        };
        assert_eq!(parse.summary(), Some("parse"));
        assert_eq!(counts.merge(parse).summary(), Some("mixed"));
    }

    #[test]
    fn clock_conversion_clamps_to_now() {
        let now = Instant::now();
        let real = 1_700_000_000_000_000_000;
        assert_eq!(
            to_instant(real - 2_000_000, now, real),
            now - Duration::from_millis(2)
        );
        // A stamp from the future (the clock stepped back) is now, never later.
        assert_eq!(to_instant(real + 5_000_000, now, real), now);
        let clock = ArrivalClock::default();
        assert_eq!(clock.last_arrival(), None);
        clock.record(Some(realtime_ns() - 1_000_000));
        let at = clock.last_arrival().unwrap();
        let age = Instant::now() - at;
        assert!(age >= Duration::from_millis(1) && age < Duration::from_millis(50));
        clock.record(None);
        assert_eq!(clock.last_arrival(), None);
    }
}
