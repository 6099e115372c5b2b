package wire

import "sync/atomic"

// Stats counts what one Server has seen since NewServer. Read it with
// Server.Stats; each field is read atomically, the set is not a snapshot.
type Stats struct {
	// ConnectionsAccepted counts accepted connections admitted under the
	// connection limits.
	ConnectionsAccepted uint64
	// ConnectionsRefused counts connections closed at once because
	// max.connections or max.connections.per.ip was reached.
	ConnectionsRefused uint64
	// AcceptErrors counts failed accepts (EMFILE, ENFILE, ...), each
	// retried after a backoff.
	AcceptErrors uint64
	// ConnectionsOpen is the number of connections open now.
	ConnectionsOpen int64
	// Requests counts requests decoded and dispatched (to wire's own
	// ApiVersions code, an interceptor or the Handler).
	Requests uint64
	// Responses counts response frames written.
	Responses uint64
	// NoResponses counts requests answered with nothing (acks=0 Produce).
	NoResponses uint64
	// UnsupportedApiVersions counts ApiVersions requests of an unserved
	// version, answered with the v0 UNSUPPORTED_VERSION body.
	UnsupportedApiVersions uint64
	// BadInput counts connections closed for bad input: a frame size out
	// of range, a truncated frame, a malformed header, an unknown key, an
	// unsupported version, an undecodable body.
	BadInput uint64
	// HandlerCloses counts connections closed because a Handler (or an
	// interceptor) answered CloseConnection.
	HandlerCloses uint64
	// HandlerErrors counts connections closed because a Handler broke its
	// contract (a panic, an invalid Response, a reply of the wrong key).
	HandlerErrors uint64
	// IdleCloses counts connections closed after connections.max.idle.ms.
	IdleCloses uint64
	// RequestBytesInUse is what request frames hold of the request memory
	// pool now (queued.max.request.bytes); 0 when the pool is unbounded.
	RequestBytesInUse int64
	// RequestMemoryWaits counts frames that waited for room in the pool.
	RequestMemoryWaits uint64
}

// counters is the live, atomic form of Stats.
type counters struct {
	accepted, requests, responses, noResponses atomic.Uint64
	unsupportedApiVersions, badInput           atomic.Uint64
	handlerCloses, handlerErrors, idleCloses   atomic.Uint64
	refused, acceptErrors                      atomic.Uint64
	open                                       atomic.Int64
}

// snapshot reads every counter.
func (c *counters) snapshot() Stats {
	return Stats{
		ConnectionsAccepted:    c.accepted.Load(),
		ConnectionsRefused:     c.refused.Load(),
		AcceptErrors:           c.acceptErrors.Load(),
		ConnectionsOpen:        c.open.Load(),
		Requests:               c.requests.Load(),
		Responses:              c.responses.Load(),
		NoResponses:            c.noResponses.Load(),
		UnsupportedApiVersions: c.unsupportedApiVersions.Load(),
		BadInput:               c.badInput.Load(),
		HandlerCloses:          c.handlerCloses.Load(),
		HandlerErrors:          c.handlerErrors.Load(),
		IdleCloses:             c.idleCloses.Load(),
	}
}
