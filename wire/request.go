package wire

import (
	"context"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Handler serves the requests that wire does not serve itself (everything
// but ApiVersions). See the package documentation for its duties.
type Handler interface {
	// Handle answers one request. For one connection it is called in
	// request order, one call at a time; calls for different connections
	// run concurrently. It must return quickly: to answer later (an actor
	// reply, a long poll) send what must be sent in order now and return
	// Defer. ctx is canceled when the connection or the server closes.
	Handle(ctx context.Context, req *Request) Response
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req *Request) Response

// Handle calls f(ctx, req).
func (f HandlerFunc) Handle(ctx context.Context, req *Request) Response { return f(ctx, req) }

// Request is one decoded request.
type Request struct {
	// Key is the API key (0 Produce, 1 Fetch, ...).
	Key int16
	// Version is the request's API version; Body is decoded at it and the
	// response is encoded at it.
	Version int16
	// CorrelationID is echoed in the response header.
	CorrelationID int32
	// ClientID is the header's client id; a null client id reads as "".
	ClientID string
	// Body is the decoded request, its version set. Byte slices in it (a
	// Produce's records) alias the frame, which wire never reuses.
	Body kmsg.Request
	// Conn describes the connection the request arrived on.
	Conn *ConnInfo
	// Received is when the frame was read (with a monotonic reading).
	Received time.Time

	frame *frameRef
}

// ReleaseFrame gives the request's frame buffer back for reuse. Call it
// only once nothing refers to the bytes of Body any more (a Produce's
// records once every partition actor has answered); after it, those bytes
// may change under any reader. Calling it is optional (the buffer is then
// collected) and only the first call counts.
func (r *Request) ReleaseFrame() { r.frame.release() }

// ConnInfo describes one client connection.
type ConnInfo struct {
	// ID is unique among the server's connections, counting from 1.
	ID uint64
	// Remote is the client's address.
	Remote net.Addr
	// Local is the server's end of the connection.
	Local net.Addr
}

// responseKind says what a Response does to the connection.
type responseKind uint8

const (
	kindInvalid responseKind = iota // the zero Response: a handler bug
	kindReply                       // write body
	kindNone                        // write nothing (acks=0 Produce)
	kindClose                       // close the connection
	kindDefer                       // run later, then use its Response
)

// Response is a Handler's answer to one request. Build it with Reply,
// NoResponse, CloseConnection or Defer; the zero Response is invalid and
// closes the connection with an error log line.
type Response struct {
	kind   responseKind
	body   kmsg.Response
	reason error
	later  func(ctx context.Context) Response
	// after runs once a reply's body has been encoded (see Then).
	after func()
	// logged marks a close that was already logged where it was decided.
	logged bool
}

// Then returns r with fn to be called once r's body has been encoded and
// written to the connection (or its write failed), after which nothing
// reads the body any more: a Fetch gives its pooled read buffers and its
// fetch memory back there. fn is not called when the reply is never
// encoded (the connection closed first).
func (r Response) Then(fn func()) Response {
	r.after = fn
	return r
}

// Reply answers with body, a response of the request's API key. wire sets
// body's version to the request's version before encoding it. For an acks=0
// Produce the reply is not written (the client reads none).
func Reply(body kmsg.Response) Response { return Response{kind: kindReply, body: body} }

// NoResponse answers nothing: the request keeps its place in the
// connection's order and no bytes are written for it. Only an acks=0
// Produce may get it; for any other request it is a handler bug and closes
// the connection.
func NoResponse() Response { return Response{kind: kindNone} }

// CloseConnection closes the connection once every earlier response is
// written; later requests on it are dropped. reason is logged at Info. An
// acks=0 Produce that fails gets this answer (Kafka closes the connection
// so the client refreshes its metadata).
func CloseConnection(reason error) Response { return Response{kind: kindClose, reason: reason} }

// Defer answers later: wire runs fn on its own goroutine and uses the
// Response it returns (which may not be another Defer). Later requests of
// the connection are dispatched meanwhile, and their responses wait for
// this one. fn must return soon after ctx is canceled.
func Defer(fn func(ctx context.Context) Response) Response {
	return Response{kind: kindDefer, later: fn}
}
