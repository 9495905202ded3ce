//! `nativeacct attach PID [options]`: HotSpot dynamic attach.

pub fn attach(_args: &[String]) -> Result<(), String> {
    Err("not implemented yet".into())
}
