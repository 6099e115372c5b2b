package batch

import "fmt"

// Split cuts buf, a run of whole batches back to back, into one slice per
// batch, read from the length fields only (call Validate on each). The slices
// alias buf, with their capacity capped at their end. At the first length
// that is impossible or runs past the end of buf, Split returns the batches
// before it and an error wrapping ErrCorrupt or ErrTruncated that gives the
// bad batch's byte position: the batches returned end there.
func Split(buf []byte) (batches [][]byte, err error) {
	for pos := 0; pos < len(buf); {
		size, err := Size(buf[pos:])
		if err != nil {
			return batches, fmt.Errorf("batch at byte %d: %w", pos, err)
		}
		if size > len(buf)-pos {
			return batches, fmt.Errorf("batch at byte %d: %w: %d bytes, %d present", pos, ErrTruncated, size, len(buf)-pos)
		}
		batches = append(batches, buf[pos:pos+size:pos+size])
		pos += size
	}
	return batches, nil
}
