package wire

// Fetch (key 1), versions 4-12.
//
// v4 isolation_level, last_stable_offset and aborted transactions (KIP-98;
// without transactions the last stable offset is the high watermark and
// no transaction is ever aborted). v5 log_start_offset (KIP-107). v6 may
// answer KAFKA_STORAGE_ERROR (older versions get NOT_LEADER_OR_FOLLOWER).
// v7 incremental fetch sessions (KIP-227): session_id, session_epoch,
// forgotten topics and a top-level error code; each request goes through
// the node's fetch session cache actor (actors/fetchsession) unless it is
// sessionless (0, -1), and FETCH_SESSION_ID_NOT_FOUND /
// INVALID_FETCH_SESSION_EPOCH go only to requests with a session id != 0
// or an epoch >= 0 (docs/clients.md rule 6). v9 current_leader_epoch (KIP-320):
// FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH, -1 means no check. v10 zstd
// (KIP-110). v11 rack id and preferred_read_replica (KIP-392; always -1).
// v12 flexible (KIP-482), last_fetched_epoch and diverging_epoch (KIP-595;
// followers only). v13+ (topic ids) are not served.
//
// The response's max bytes is the request's capped by the broker's
// fetch.max.bytes (and min_bytes by that), as Kafka's KafkaApis does.
// Records are whole batches, at least one even if larger than the
// partition's or the response's max bytes (KIP-74): the first batch of the
// first partition with data; every later partition reads at most what is
// left, and nothing when its first batch does not fit. No read takes more
// from a segment than its limit (or that first batch). Records are never
// null (docs/clients.md rule 8). A fetch that finds fewer than min_bytes parks one
// WatchHighWatermark in every partition actor it reads and waits, in its
// Defer goroutine, for the first to fire or for max_wait; it then reads
// again. Nothing polls. LEADER_NOT_AVAILABLE is never sent (docs/clients.md rule 6).
// A fetch with replica_id >= 0 is a follower's (01_fetch_replica.go).

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/fetchsession"
	"github.com/weirmq/weir/actors/partition"
)

// handleFetch serves Fetch v4-12. Handle sends the session decision to the
// cache actor (so pipelined fetches of one connection are decided in
// order); the reads and the long poll run in the Defer.
func (h *BrokerHandler) handleFetch(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.FetchRequest)
	if r.ReplicaID >= 0 {
		return h.handleReplicaFetch(req, r) // 01_fetch_replica.go
	}
	sreq := fetchSessionRequest(r)
	op := &fetchOp{h: h, req: req, r: r, reads: sreq.Partitions}
	if sreq.SessionID != 0 || sreq.SessionEpoch >= 0 {
		op.inbox = partition.NewInbox(h.cfg.System)
		op.beginID = op.inbox.NextID()
		h.apis.fetchSessions.SendBegin(op.beginID, sreq, op.inbox.PID())
		op.session = true
	}
	return Defer(op.run)
}

// fetchSessionRequest converts the request's session part: versions
// before 7 are sessionless (0, -1); fields a version lacks get Kafka's
// "absent" values.
func fetchSessionRequest(r *kmsg.FetchRequest) *fetchsession.Request {
	sreq := &fetchsession.Request{SessionID: 0, SessionEpoch: fetchsession.FinalEpoch, ReplicaID: r.ReplicaID}
	if r.Version >= 7 {
		sreq.SessionID, sreq.SessionEpoch = r.SessionID, r.SessionEpoch
		for _, t := range r.ForgottenTopics {
			for _, p := range t.Partitions {
				sreq.Forgotten = append(sreq.Forgotten, fetchsession.PartitionKey{Topic: t.Topic, Partition: p})
			}
		}
	}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			fp := fetchsession.FetchPartition{
				Topic: t.Topic, Partition: p.Partition, FetchOffset: p.FetchOffset,
				LogStartOffset: -1, PartitionMaxBytes: p.PartitionMaxBytes,
				CurrentLeaderEpoch: -1, LastFetchedEpoch: -1,
			}
			if r.Version >= 5 {
				fp.LogStartOffset = p.LogStartOffset
			}
			if r.Version >= 9 {
				fp.CurrentLeaderEpoch = p.CurrentLeaderEpoch
			}
			if r.Version >= 12 {
				fp.LastFetchedEpoch = p.LastFetchedEpoch
			}
			sreq.Partitions = append(sreq.Partitions, fp)
		}
	}
	return sreq
}

// fetchOp is one Fetch request being served in its Defer goroutine.
type fetchOp struct {
	h       *BrokerHandler
	req     *Request
	r       *kmsg.FetchRequest
	inbox   *partition.Inbox
	session bool
	beginID uint64
	reads   []fetchsession.FetchPartition
	targets []fetchTarget
	// bufs are the pooled read buffers the last readAll's results use;
	// they go back once the response is encoded.
	bufs [][]byte
	// held is what the last readAll's records took from the node's fetch
	// memory; it goes back with bufs.
	held int64
	// replica is a follower's fetch (replica_id >= 0, 01_fetch_replica.go):
	// it reads up to the log end offset, watches the log end, and reports
	// the follower's positions after its first read (then reported is set).
	replica  bool
	reported bool
	// sreq is a replica fetch's session request, kind its session's
	// decision (01_fetch_replica.go).
	sreq *fetchsession.Request
	kind fetchsession.Kind
}

// fetchTarget is one partition to read: its replica, or the error that
// stands in for it.
type fetchTarget struct {
	read fetchsession.FetchPartition
	c    *partition.Client
	code int16
	// diverged is a replica fetch whose last fetched epoch ends, in this
	// log, before its fetch offset (01_fetch_replica.go): it is answered
	// with div and st's offsets, and not read.
	diverged bool
	div      kmsg.FetchResponseTopicPartitionDivergingEpoch
	st       partition.Status
}

// run serves the fetch: the session decision, the reads, the long poll,
// and the response.
func (f *fetchOp) run(ctx context.Context) Response {
	if f.inbox == nil {
		f.inbox = partition.NewInbox(f.h.cfg.System)
	}
	defer f.inbox.Close()
	defer f.releaseMemory() // what the response did not take along
	resp := f.r.ResponseKind().(*kmsg.FetchResponse)
	var fctx *fetchsession.Context
	if f.session {
		var answer Response
		var ok bool
		if fctx, answer, ok = f.beginSession(ctx, resp); !ok {
			return answer
		}
		f.reads = fctx.Reads
	}
	f.resolve()
	f.checkLease()
	results := f.longPoll(ctx)
	parts := results
	if f.session {
		var closed Response
		var ok bool
		if parts, closed, ok = f.finishSession(ctx, resp, fctx, results, "fetch"); !ok {
			return closed
		}
	}
	f.fill(resp, parts)
	return f.reply(ctx, resp)
}

// beginSession takes the session's decision on the request, which the
// handler asked for (beginID): what to read. A session actor that does
// not answer closes the connection; a session error is the whole answer
// (resp with its top-level code). Either way ok is false and the
// Response returned is the answer.
func (f *fetchOp) beginSession(ctx context.Context, resp *kmsg.FetchResponse) (fctx *fetchsession.Context, answer Response, ok bool) {
	m, answered := receiveSession(ctx, f.inbox, f.beginID).(*fetchsession.FetchBegun)
	if !answered {
		return nil, CloseConnection(errNoSessionActor), false
	}
	if m.Context.Kind == fetchsession.KindError {
		resp.ErrorCode = m.Context.ErrorCode
		return nil, Reply(resp), false
	}
	return m.Context, Response{}, true
}

// finishSession hands the fetch's results to its session, which answers
// with the partitions to send; it sets the response's error code and
// session id. A session actor that does not answer, or a result it cannot
// match, closes the connection: ok is false and the Response returned
// says so. what names the fetch in the error.
func (f *fetchOp) finishSession(ctx context.Context, resp *kmsg.FetchResponse, fctx *fetchsession.Context,
	results []fetchsession.PartitionResult, what string) (parts []fetchsession.PartitionResult, closed Response, ok bool) {
	id := f.inbox.NextID()
	f.h.apis.fetchSessions.SendFinish(id, fctx, results, f.inbox.PID())
	m, answered := receiveSession(ctx, f.inbox, id).(*fetchsession.FetchFinished)
	if !answered {
		return nil, CloseConnection(errNoSessionActor), false
	}
	if m.Err != nil {
		return nil, CloseConnection(fmt.Errorf("wire: %s: %w", what, m.Err)), false
	}
	resp.ErrorCode, resp.SessionID = m.Response.ErrorCode, m.Response.SessionID
	return m.Response.Partitions, Response{}, true
}

// reply answers with resp, whose records are the last readAll's: their
// pooled buffers and fetch memory go back once it is written.
func (f *fetchOp) reply(ctx context.Context, resp *kmsg.FetchResponse) Response {
	if len(f.bufs) == 0 && f.held == 0 {
		return Reply(resp)
	}
	bufs, held, mem := f.bufs, f.held, f.h.apis.fetchMemory
	f.bufs, f.held = nil, 0
	// The memory goes back once the response is written, or when the
	// connection closes first (then nothing may write it); the buffers
	// only after writing, since a closing connection may still encode.
	var once sync.Once
	giveBack := func() { once.Do(func() { mem.give(held) }) }
	stop := context.AfterFunc(ctx, giveBack)
	return Reply(resp).Then(func() {
		stop()
		giveBack()
		for _, b := range bufs {
			putFrame(b)
		}
	})
}

// releaseMemory returns the records' fetch memory and pooled buffers of
// the last read.
func (f *fetchOp) releaseMemory() {
	for _, b := range f.bufs {
		putFrame(b)
	}
	f.bufs = f.bufs[:0]
	f.h.apis.fetchMemory.give(f.held)
	f.held = 0
}

// errNoSessionActor closes a connection whose fetch got no answer from the
// fetch session actor (the node is shutting down or the connection closed).
var errNoSessionActor = errors.New("wire: fetch: no answer from the fetch session actor")

// receiveSession waits for the fetch session actor's answer with id,
// dropping other messages; nil when ctx ends or the actor is gone.
func receiveSession(ctx context.Context, in *partition.Inbox, id uint64) any {
	for {
		m, err := in.Receive(ctx)
		if err != nil {
			return nil
		}
		switch v := m.(type) {
		case *fetchsession.FetchBegun:
			if v.ID == id {
				return v
			}
		case *fetchsession.FetchFinished:
			if v.ID == id {
				return v
			}
		case *actor.DeadLetterResponse:
			return nil
		}
	}
}

// resolve finds each read's local replica in the current image.
func (f *fetchOp) resolve() {
	img := f.h.broker.Image()
	f.targets = make([]fetchTarget, len(f.reads))
	for i, rd := range f.reads {
		c, _, code := f.h.localReplica(img, rd.Topic, rd.Partition)
		f.targets[i] = fetchTarget{read: rd, c: c, code: code}
	}
}

// longPoll reads every partition; while the fetch may wait and found
// fewer than min_bytes (and no error), it parks watches in the partition
// actors and reads again when the first fires or max_wait passes.
func (f *fetchOp) longPoll(ctx context.Context) []fetchsession.PartitionResult {
	deadline := f.req.Received.Add(time.Duration(max(f.r.MaxWaitMillis, 0)) * time.Millisecond)
	minBytes := min(int64(f.r.MinBytes), f.maxBytes())
	for {
		results, bytes, failed := f.readAll()
		if f.r.MaxWaitMillis <= 0 || len(results) == 0 || int64(bytes) >= minBytes || failed ||
			!time.Now().Before(deadline) || ctx.Err() != nil {
			return results
		}
		f.waitForData(ctx, results, f.leaseBound(deadline))
		f.checkLease()
	}
}

// leaseHolder is the Broker's lease's end, when it has one (a node of a
// cluster; wire's tests' brokers and a single node have none).
type leaseHolder interface {
	// LeaseUntil is when the lease lapses unless renewed; zero: no lease
	// to lapse.
	LeaseUntil() time.Time
}

// checkLease fails a consumer's partitions once this node's lease has
// lapsed (docs/DESIGN.md "Leader lease"): a paused or cut-off leader's
// lease lapses before the controller elects another, and its reads, though
// never past what it committed, would keep a consumer waiting on it while
// the new leader takes writes. NOT_LEADER_OR_FOLLOWER sends the client to
// the metadata for the new leader. A follower's fetch is still served: it
// may complete what this node accepted before.
func (f *fetchOp) checkLease() {
	if f.replica || f.h.broker.LeaseValid() {
		return
	}
	for i := range f.targets {
		if t := &f.targets[i]; t.code == 0 {
			t.code = kerr.NotLeaderForPartition.Code
		}
	}
}

// leaseBound ends a consumer's long poll no later than the lease's end, so
// that a lapse fails the fetch then (checkLease), not at its max wait.
func (f *fetchOp) leaseBound(deadline time.Time) time.Time {
	if f.replica {
		return deadline
	}
	if lh, ok := f.h.broker.(leaseHolder); ok {
		if until := lh.LeaseUntil(); !until.IsZero() && until.Before(deadline) {
			return until.Add(time.Millisecond)
		}
	}
	return deadline
}

// maxBytes is the response's byte budget: the request's max bytes capped
// by fetch.max.bytes (Kafka's fetchMaxBytes).
func (f *fetchOp) maxBytes() int64 {
	limit := f.h.broker.Config().Int("fetch.max.bytes")
	if f.r.Version >= 3 {
		limit = min(limit, int64(max(f.r.MaxBytes, 0)))
	}
	return limit
}

// readAll reads each partition once, in order, within the response's max
// bytes: the first partition with data returns at least one whole batch
// (KIP-74), later ones only what fits in what is left (a hard limit, so
// a batch that does not fit is not read). It returns the results, the
// bytes of records, and whether a partition failed (which completes a
// fetch at once, as Kafka's DelayedFetch does).
func (f *fetchOp) readAll() ([]fetchsession.PartitionResult, int, bool) {
	remaining := f.maxBytes()
	// A new read replaces the previous one's results and their buffers.
	f.releaseMemory()
	mem := f.h.apis.fetchMemory
	results := make([]fetchsession.PartitionResult, len(f.targets))
	total, failed := 0, false
	for i, t := range f.targets {
		res := fetchsession.PartitionResult{
			Topic: t.read.Topic, Partition: t.read.Partition, ErrorCode: t.code,
			HighWatermark: -1, LastStableOffset: -1, LogStartOffset: -1, PreferredReadReplica: -1, Records: []byte{},
		}
		if t.diverged {
			res.HighWatermark, res.LastStableOffset, res.LogStartOffset = t.st.HighWatermark, t.st.HighWatermark, t.st.LogStartOffset
		}
		if t.code == 0 && !t.diverged {
			// Under contention for the node's fetch memory the read gets
			// what is free; the first partition with data may still return
			// its first batch whole.
			limit := mem.take(min(int64(max(t.read.PartitionMaxBytes, 0)), remaining))
			buf := readBuffer(limit)
			isolation := partition.IsolationLevel(f.r.IsolationLevel)
			if f.replica {
				isolation = partition.ReadUncommitted
			}
			rr := t.c.ReadNow(&partition.ReadRecords{
				Offset: t.read.FetchOffset, MaxBytes: int(limit), HardMaxBytes: total > 0,
				Replica: f.replica, Isolation: isolation,
				CheckLeaderEpoch: t.read.CurrentLeaderEpoch != -1, CurrentLeaderEpoch: t.read.CurrentLeaderEpoch,
				Buf: buf,
			})
			res.ErrorCode, res.HighWatermark, res.LastStableOffset, res.LogStartOffset = rr.ErrorCode, rr.HighWatermark, rr.LastStableOffset, rr.LogStartOffset
			n := int64(0)
			if rr.ErrorCode == 0 && len(rr.Records) > 0 {
				n = int64(len(rr.Records))
				res.Records = f.keepRead(buf, rr.Records)
				buf = nil
				total += len(rr.Records)
				remaining = max(remaining-n, 0)
			}
			if n > limit {
				mem.force(n - limit) // KIP-74: the first batch, over the limit
			} else {
				mem.give(limit - n)
			}
			f.held += n
			if buf != nil {
				putFrame(buf)
			}
		}
		if res.ErrorCode == kerr.KafkaStorageError.Code && f.r.Version < 6 {
			res.ErrorCode = kerr.NotLeaderForPartition.Code
		}
		// A diverged replica is answered at once, as an error is (Kafka's
		// DelayedFetch completes on a diverging epoch too).
		failed = failed || res.ErrorCode != 0 || t.diverged
		results[i] = res
	}
	if f.replica && !f.reported {
		f.reported = true
		f.reportPositions(results)
	}
	return results, total, failed
}

// waitForData parks one watch per readable partition and waits for the
// first to fire, the deadline or ctx; then it cancels the watches. A
// follower's fetch waits on one StatusWatch instead (waitForLogEnd).
func (f *fetchOp) waitForData(ctx context.Context, results []fetchsession.PartitionResult, deadline time.Time) {
	if f.replica {
		f.waitForLogEnd(ctx, deadline)
		return
	}
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	deadlineMs := deadline.UnixMilli()
	ids := make(map[uint64]bool, len(f.targets))
	type watched struct {
		c  *partition.Client
		id uint64
	}
	var all []watched
	for i, t := range f.targets {
		if t.c == nil {
			continue
		}
		id := f.inbox.NextID()
		ids[id] = true
		all = append(all, watched{t.c, id})
		t.c.SendWatch(&partition.WatchHighWatermark{ID: id, ReplyTo: f.inbox.PID(), Above: max(results[i].HighWatermark, t.read.FetchOffset), DeadlineMs: deadlineMs})
	}
	defer func() {
		for _, w := range all {
			w.c.SendCancelWatch(&partition.CancelWatch{ID: w.id, ReplyTo: f.inbox.PID()})
		}
	}()
	for {
		m, err := f.inbox.Receive(wctx)
		if err != nil {
			return
		}
		if w, ok := m.(*partition.HighWatermarkReached); ok && ids[w.ID] {
			return
		}
	}
}

// fill builds the response's topics from the partitions to send, grouping
// consecutive partitions of one topic.
func (f *fetchOp) fill(resp *kmsg.FetchResponse, parts []fetchsession.PartitionResult) {
	for _, p := range parts {
		if n := len(resp.Topics); n == 0 || resp.Topics[n-1].Topic != p.Topic {
			t := kmsg.NewFetchResponseTopic()
			t.Topic = p.Topic
			resp.Topics = append(resp.Topics, t)
		}
		t := &resp.Topics[len(resp.Topics)-1]
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.Partition, rp.ErrorCode = p.Partition, p.ErrorCode
		rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = p.HighWatermark, p.LastStableOffset, p.LogStartOffset
		rp.PreferredReadReplica = -1
		rp.RecordBatches = p.Records
		if rp.RecordBatches == nil {
			rp.RecordBatches = []byte{}
		}
		t.Partitions = append(t.Partitions, rp)
	}
}

// readBuffer returns a pooled buffer for a read of up to limit bytes, or
// nil when limit is outside the pool's sizes.
func readBuffer(limit int64) []byte {
	if limit < framePoolMin || limit > framePoolMax {
		return nil
	}
	return getFrame(int(limit))[:0]
}

// keepRead decides where a read's data lives: in buf, kept until the
// response is encoded, when the data filled at least half of it; else in
// an exact copy (or the log's own allocation), with buf back in the pool
// at once, so that small reads do not hold large buffers.
func (f *fetchOp) keepRead(buf, data []byte) []byte {
	if buf == nil {
		return data
	}
	inBuf := cap(buf) > 0 && len(data) > 0 && &buf[:1][0] == &data[:1][0]
	switch {
	case !inBuf:
		putFrame(buf)
		return data
	case 2*len(data) >= cap(buf):
		f.bufs = append(f.bufs, buf)
		return data
	}
	data = append([]byte(nil), data...)
	putFrame(buf)
	return data
}
