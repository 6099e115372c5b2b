package log

// TEMPORARY until the cleaner lands in this file.

// Clean runs one cleaning pass over every compacted log.
func (m *Manager) Clean() int { return 0 }

func (m *Manager) completeSwaps(dir string, swaps, names []string) error { return nil }
