package jobs

// SetAfterSend installs a hook that runs after each request returns and before its outcome is journaled.
func SetAfterSend(f func()) { afterSend = f }
