package metadata

import (
	"iter"
	"slices"
)

// partitionVec is a topic's partitions, index i at position i, kept in
// chunks of up to chunkSize so that changing one partition of a large topic
// copies one chunk and the list of chunks (for 10,000 partitions, about
// 200 pointers) rather than every partition pointer.
type partitionVec struct {
	chunks []*partitionChunk
	n      int
}

type partitionChunk struct {
	parts []*Partition
}

const chunkSize = 128

func (v partitionVec) len() int { return v.n }

func (v partitionVec) at(i int) *Partition {
	return v.chunks[i/chunkSize].parts[i%chunkSize]
}

// all yields the partitions in index order.
func (v partitionVec) all() iter.Seq[*Partition] {
	return func(yield func(*Partition) bool) {
		for _, c := range v.chunks {
			for _, p := range c.parts {
				if !yield(p) {
					return
				}
			}
		}
	}
}

// clone returns a vector that shares v's chunks but not its chunk list.
func (v partitionVec) clone() partitionVec {
	return partitionVec{chunks: slices.Clone(v.chunks), n: v.n}
}

// writableChunk returns chunk c of v, copied first unless owned says this
// build already owns it. v's chunk list must be owned by the build.
func (v *partitionVec) writableChunk(owned map[*partitionChunk]bool, c int) *partitionChunk {
	chunk := v.chunks[c]
	if owned[chunk] {
		return chunk
	}
	chunk = &partitionChunk{parts: slices.Clone(chunk.parts)}
	owned[chunk] = true
	v.chunks[c] = chunk
	return chunk
}

func (v *partitionVec) set(owned map[*partitionChunk]bool, i int, p *Partition) {
	v.writableChunk(owned, i/chunkSize).parts[i%chunkSize] = p
}

func (v *partitionVec) append(owned map[*partitionChunk]bool, p *Partition) {
	if v.n%chunkSize == 0 {
		chunk := &partitionChunk{}
		owned[chunk] = true
		v.chunks = append(v.chunks, chunk)
	}
	chunk := v.writableChunk(owned, len(v.chunks)-1)
	chunk.parts = append(chunk.parts, p)
	v.n++
}
