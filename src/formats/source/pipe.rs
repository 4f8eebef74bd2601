//! Inflate on a second thread for streaming loaders: the gzip decoder runs ahead of the JSON parser, handing over
//! 1 MiB chunks through a bounded channel (at most 4 in flight, so memory stays small).

use std::io::{self, Read};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

const CHUNK: usize = 1 << 20;

/// A `Read` over data produced by another thread reading `R`.
pub struct Pipelined {
    rx: Receiver<io::Result<Vec<u8>>>,
    back: SyncSender<Vec<u8>>,
    cur: Vec<u8>,
    pos: usize,
    done: bool,
    handle: Option<JoinHandle<()>>,
}

impl Pipelined {
    /// Starts a thread reading `inner` to its end (or first error).
    pub fn spawn<R: Read + Send + 'static>(mut inner: R) -> Self {
        let (tx, rx) = sync_channel::<io::Result<Vec<u8>>>(4);
        let (back, spare) = sync_channel::<Vec<u8>>(8);
        let handle = std::thread::spawn(move || {
            loop {
                let mut buf = spare
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(CHUNK));
                buf.clear();
                buf.resize(CHUNK, 0);
                let mut filled = 0;
                let res = loop {
                    match inner.read(&mut buf[filled..]) {
                        Ok(0) => break Ok(()),
                        Ok(n) => {
                            filled += n;
                            if filled == buf.len() {
                                break Ok(());
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => break Err(e),
                    }
                };
                buf.truncate(filled);
                let last = filled < CHUNK || res.is_err();
                if filled > 0 && tx.send(Ok(buf)).is_err() {
                    return;
                }
                if let Err(e) = res {
                    let _ = tx.send(Err(e));
                    return;
                }
                if last {
                    return;
                }
            }
        });
        Pipelined {
            rx,
            back,
            cur: Vec::new(),
            pos: 0,
            done: false,
            handle: Some(handle),
        }
    }
}

impl Read for Pipelined {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos >= self.cur.len() {
            if self.done {
                return Ok(0);
            }
            match self.rx.recv() {
                Ok(Ok(buf)) => {
                    let old = std::mem::replace(&mut self.cur, buf);
                    let _ = self.back.try_send(old);
                    self.pos = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Ok(0);
                }
            }
        }
        let n = out.len().min(self.cur.len() - self.pos);
        out[..n].copy_from_slice(&self.cur[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl Drop for Pipelined {
    fn drop(&mut self) {
        // Unblock the producer (receiver gone → its send fails) and wait for it.
        let (_, rx) = sync_channel(0);
        drop(std::mem::replace(&mut self.rx, rx));
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Failing {
        left: usize,
    }

    impl Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.left == 0 {
                return Err(io::Error::other("boom"));
            }
            let n = buf.len().min(self.left).min(1000);
            buf[..n].fill(b'x');
            self.left -= n;
            Ok(n)
        }
    }

    #[test]
    fn passes_all_bytes_through_in_order() {
        let data: Vec<u8> = (0..3_500_000u32).map(|i| (i % 251) as u8).collect();
        let mut out = Vec::new();
        Pipelined::spawn(io::Cursor::new(data.clone()))
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn forwards_errors_after_the_data() {
        let mut p = Pipelined::spawn(Failing { left: 2_500_000 });
        let mut out = Vec::new();
        let e = p.read_to_end(&mut out).unwrap_err();
        assert_eq!(e.to_string(), "boom");
        assert_eq!(out.len(), 2_500_000);
        // Dropping early never hangs.
        drop(Pipelined::spawn(io::repeat(0).take(50_000_000)));
    }
}
