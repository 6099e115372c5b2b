package fetchsession

// Messages of the fetch session actors (actor.go). Requests go to the
// cache actor and are answered to their sender, carrying the sender's ID,
// by the cache actor or by the session's own actor.

// BeginFetch asks the actor to decide on a Fetch request's session
// (Cache.NewContext). The actor sets Request.NowMs from its clock.
// Answered with FetchBegun.
type BeginFetch struct {
	ID      uint64
	Request *Request
}

// FetchBegun answers BeginFetch: read Context.Kind, ErrorCode and Reads;
// hand the Context back in FinishFetch unchanged.
type FetchBegun struct {
	ID      uint64
	Context *Context
}

// FinishFetch hands the reads' results to the actor (Cache.Respond), which
// creates the session of a full fetch and records what is sent. Answered
// with FetchFinished.
type FinishFetch struct {
	ID      uint64
	Context *Context
	Results []PartitionResult
}

// FetchFinished answers FinishFetch.
type FetchFinished struct {
	ID       uint64
	Response Response
	// Err is a caller bug (a missing result); the fetch then fails.
	Err error
}

// CloseSessions closes every session (node shutdown). No answer.
type CloseSessions struct{}

// sessionUsed is a session actor's report to the cache actor after it
// answered: the session's size and last use, which eviction reads.
type sessionUsed struct {
	id    int32
	gen   uint64
	size  int
	nowMs int64
}

// The messages are not logged as dead letters: a fetch whose connection
// closed no longer reads its answer, and a request to a stopped actor is
// answered by protoactor's DeadLetterResponse.

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*BeginFetch) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*FetchBegun) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*FinishFetch) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*FetchFinished) IgnoreDeadLetterLogging() {}
