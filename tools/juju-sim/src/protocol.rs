//! Wire format between the `jujuc` hook-tool executable and the simulator's tool server.
//!
//! Deliberately tiny and dependency-free so `jujuc` starts fast: every field is a
//! little-endian `u32` length followed by that many bytes.

use std::io::{self, Read, Write};

/// Upper bound for one field, so a corrupt peer cannot make us allocate without limit.
const MAX_FIELD: usize = 256 * 1024 * 1024;

/// One hook-tool invocation, as `jujuc` forwards it (like Juju's `jujuc.Request`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Request {
    /// `JUJU_CONTEXT_ID` of the calling process.
    pub context_id: String,
    /// Working directory of the calling process (for relative `--file`/`--output` paths).
    pub cwd: String,
    /// The tool name (basename of argv\[0\]).
    pub tool: String,
    /// The arguments after the tool name.
    pub args: Vec<String>,
    /// Standard input, when the tool reads it (`--file -`); empty otherwise.
    pub stdin: Vec<u8>,
}

/// The result of one invocation.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Response {
    /// Process exit code for `jujuc`.
    pub code: i32,
    /// Bytes for standard output.
    pub stdout: Vec<u8>,
    /// Bytes for standard error.
    pub stderr: Vec<u8>,
}

fn write_field(w: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    let len = u32::try_from(bytes.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "field too large"))?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(bytes)
}

fn read_field(r: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FIELD {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "field too large",
        ));
    }
    let mut buf = vec![0u8; len];
    r.read_exact(&mut buf)?;
    Ok(buf)
}

fn read_string(r: &mut impl Read) -> io::Result<String> {
    String::from_utf8(read_field(r)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "field is not UTF-8"))
}

impl Request {
    /// Serialise onto a stream.
    pub fn write_to(&self, w: &mut impl Write) -> io::Result<()> {
        let mut buf = Vec::with_capacity(256 + self.stdin.len());
        write_field(&mut buf, self.context_id.as_bytes())?;
        write_field(&mut buf, self.cwd.as_bytes())?;
        write_field(&mut buf, self.tool.as_bytes())?;
        let argc = u32::try_from(self.args.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "too many args"))?;
        buf.extend_from_slice(&argc.to_le_bytes());
        for a in &self.args {
            write_field(&mut buf, a.as_bytes())?;
        }
        write_field(&mut buf, &self.stdin)?;
        w.write_all(&buf)?;
        w.flush()
    }

    /// Deserialise from a stream.
    pub fn read_from(r: &mut impl Read) -> io::Result<Self> {
        let context_id = read_string(r)?;
        let cwd = read_string(r)?;
        let tool = read_string(r)?;
        let mut argc = [0u8; 4];
        r.read_exact(&mut argc)?;
        let argc = u32::from_le_bytes(argc) as usize;
        if argc > 1 << 20 {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "too many args"));
        }
        let mut args = Vec::with_capacity(argc);
        for _ in 0..argc {
            args.push(read_string(r)?);
        }
        let stdin = read_field(r)?;
        Ok(Request {
            context_id,
            cwd,
            tool,
            args,
            stdin,
        })
    }
}

impl Response {
    /// Serialise onto a stream.
    pub fn write_to(&self, w: &mut impl Write) -> io::Result<()> {
        let mut buf = Vec::with_capacity(16 + self.stdout.len() + self.stderr.len());
        buf.extend_from_slice(&self.code.to_le_bytes());
        write_field(&mut buf, &self.stdout)?;
        write_field(&mut buf, &self.stderr)?;
        w.write_all(&buf)?;
        w.flush()
    }

    /// Deserialise from a stream.
    pub fn read_from(r: &mut impl Read) -> io::Result<Self> {
        let mut code = [0u8; 4];
        r.read_exact(&mut code)?;
        let stdout = read_field(r)?;
        let stderr = read_field(r)?;
        Ok(Response {
            code: i32::from_le_bytes(code),
            stdout,
            stderr,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_round_trips() {
        let req = Request {
            context_id: "a/0-install-00".into(),
            cwd: "/tmp".into(),
            tool: "relation-get".into(),
            args: vec!["-r".into(), "3".into(), String::new()],
            stdin: b"{}".to_vec(),
        };
        let mut buf = Vec::new();
        req.write_to(&mut buf).unwrap();
        assert_eq!(Request::read_from(&mut buf.as_slice()).unwrap(), req);
    }

    #[test]
    fn response_round_trips() {
        let resp = Response {
            code: 2,
            stdout: b"x".to_vec(),
            stderr: b"ERROR y\n".to_vec(),
        };
        let mut buf = Vec::new();
        resp.write_to(&mut buf).unwrap();
        assert_eq!(Response::read_from(&mut buf.as_slice()).unwrap(), resp);
    }

    #[test]
    fn truncated_input_is_an_error() {
        assert!(Request::read_from(&mut [1u8, 0].as_slice()).is_err());
    }
}
