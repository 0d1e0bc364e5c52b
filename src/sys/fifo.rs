//! Named pipes for the output of a process crosspickle did not start itself (a fork server's
//! child opens them by path): the read end, and a write end crosspickle holds so that the
//! reader does not see end of file before the writer has even opened its end. Unix only: on
//! Windows [`Fifo::create`] says it is not available (there are no fork servers there).

use std::fs::File;
use std::path::Path;

use super::os;

/// A FIFO made at a path: read it through `reader`; drop `keeper` once the process that writes
/// to it has ended, so that the reader then sees end of file (as soon as every process that
/// inherited the write end has closed it, as with a pipe).
pub struct Fifo {
    pub reader: os::FifoReader,
    pub keeper: File,
}

impl Fifo {
    /// Make a FIFO at `path` (readable and writable by this user only) and open both ends.
    pub fn create(path: &Path) -> std::io::Result<Fifo> {
        let (reader, keeper) = os::make_fifo(path)?;
        Ok(Fifo { reader, keeper })
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn end_of_file_only_once_the_keeper_and_writers_are_gone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let Fifo { mut reader, keeper } = Fifo::create(&path).unwrap();
        let mut writer = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        writer.write_all(b"hello").unwrap();
        drop(writer);
        let mut buf = [0u8; 16];
        let n = reader.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"hello");
        // The writer is gone but the keeper is not: no end of file yet.
        let early =
            tokio::time::timeout(std::time::Duration::from_millis(100), reader.read(&mut buf))
                .await;
        assert!(early.is_err(), "end of file while the keeper is held");
        drop(keeper);
        assert_eq!(reader.read(&mut buf).await.unwrap(), 0);
    }
}
