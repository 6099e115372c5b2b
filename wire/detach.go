package wire

// Requests whose bytes a group keeps (JoinGroup's protocol metadata,
// SyncGroup's assignments) are detached from their frame before they reach
// the coordinator: the kept bytes are copied into one allocation of their
// exact size, the fields that would still alias the frame (unknown tagged
// fields, which no coordinator reads) are dropped, and the frame goes back
// to its pool at once. A parked join then holds its metadata once, not
// inside a pooled frame of up to twice its size, and a group keeps nothing
// but what it stores.

import "github.com/twmb/franz-go/pkg/kmsg"

// detachJoinGroup gives r's protocol metadata its own memory and releases
// req's frame.
func detachJoinGroup(req *Request, r *kmsg.JoinGroupRequest) {
	n := 0
	for _, p := range r.Protocols {
		n += len(p.Metadata)
	}
	buf := make([]byte, 0, n)
	for i := range r.Protocols {
		p := &r.Protocols[i]
		start := len(buf)
		buf = append(buf, p.Metadata...)
		p.Metadata = buf[start:len(buf):len(buf)]
		p.UnknownTags = kmsg.Tags{}
	}
	r.UnknownTags = kmsg.Tags{}
	req.ReleaseFrame()
}

// detachSyncGroup gives r's assignments their own memory and releases
// req's frame.
func detachSyncGroup(req *Request, r *kmsg.SyncGroupRequest) {
	n := 0
	for _, a := range r.GroupAssignment {
		n += len(a.MemberAssignment)
	}
	buf := make([]byte, 0, n)
	for i := range r.GroupAssignment {
		a := &r.GroupAssignment[i]
		start := len(buf)
		buf = append(buf, a.MemberAssignment...)
		a.MemberAssignment = buf[start:len(buf):len(buf)]
		a.UnknownTags = kmsg.Tags{}
	}
	r.UnknownTags = kmsg.Tags{}
	req.ReleaseFrame()
}
