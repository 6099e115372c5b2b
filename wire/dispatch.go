package wire

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// pending is one request's place in its connection's response order.
type pending struct {
	corr    int32
	key     int16
	version int16 // the response's version
	// noReply marks an acks=0 Produce: nothing is ever written for it.
	noReply bool
	// resp is settled (reply, none or close) once done is closed, or at
	// once when done is nil; until then it may hold a Defer.
	resp Response
	done chan struct{}
	// frame is the request's frame (nil for an answer without one); its
	// request memory returns once the answer is written or dropped.
	frame *frameRef
	// fetch marks a Fetch, which holds its connection's fetch slot.
	fetch bool
}

// serveFrame turns one frame into its pending answer: it parses the header,
// checks the key and version against the table, decodes the body with kmsg
// and dispatches it. The answer may still be a Defer, which complete runs.
// Bad input yields a logged close.
func (s *Server) serveFrame(ctx context.Context, ci *ConnInfo, ref *frameRef, received time.Time) *pending {
	frame := ref.buf
	h, rest, err := parseHeader(frame)
	if err != nil {
		return s.reject(&pending{frame: ref}, ci, nil, err)
	}
	p := &pending{corr: h.corr, key: h.key, version: h.version, frame: ref}
	api := s.index.lookup(h.key)
	switch {
	case api == nil:
		return s.reject(p, ci, &h, errUnknownKey)
	case h.key == apiVersionsKey && !api.Served.Contains(h.version):
		s.stats.unsupportedApiVersions.Add(1)
		p.version, p.resp = 0, Reply(s.unsupportedApiVersions())
		return p
	case !api.Advertised.Contains(h.version):
		return s.reject(p, ci, &h, fmt.Errorf("%w: advertised %d-%d", errUnsupportedVersion, api.Advertised.Min, api.Advertised.Max))
	}
	body, err := decodeBody(h, rest)
	if err != nil {
		return s.reject(p, ci, &h, err)
	}
	req := &Request{Key: h.key, Version: h.version, CorrelationID: h.corr, ClientID: h.client, Body: body, Conn: ci, Received: received,
		frame: ref}
	p.noReply = !expectsReply(body)
	s.stats.requests.Add(1)
	if r := s.dispatch(ctx, api, req); r.kind == kindDefer {
		p.resp = r
	} else {
		p.resp = s.settle(p, ci, r)
	}
	return p
}

// decodeBody skips a flexible header's tags and decodes the body at the
// header's version. The key is known to kmsg (the table is checked). A
// panic inside kmsg (none is known; FuzzServeFrame looks for them) is bad
// input too: one client must not take the server down.
func decodeBody(h header, rest []byte) (_ kmsg.Request, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: panic in kmsg decoding: %v", errBody, r)
		}
	}()
	body := kmsg.RequestForKey(h.key)
	if body == nil {
		return nil, errUnknownKey
	}
	body.SetVersion(h.version)
	if body.IsFlexible() {
		if rest, err = skipHeaderTags(rest); err != nil {
			return nil, err
		}
	}
	if err = body.ReadFrom(rest); err != nil {
		return nil, fmt.Errorf("%w: %d bytes: %w", errBody, len(rest), err)
	}
	return body, nil
}

// expectsReply reports whether the client reads a response to body: every
// request but an acks=0 Produce.
func expectsReply(body kmsg.Request) bool {
	p, ok := body.(*kmsg.ProduceRequest)
	return !ok || p.Acks != 0
}

// dispatch routes a decoded request: the interceptor first, then wire's own
// ApiVersions, the row's Unserved answer for an advertised but unserved
// version, or the Handler. A panic in any of them is a handler error.
func (s *Server) dispatch(ctx context.Context, api *API, req *Request) (resp Response) {
	defer func() {
		if r := recover(); r != nil {
			resp = s.handlerError(req.Conn, req.Key, req.Version, req.CorrelationID, fmt.Errorf("%w: panic: %v", errHandler, r), debug.Stack())
		}
	}()
	if s.cfg.Intercept != nil {
		if r, ok := s.cfg.Intercept(ctx, req); ok {
			return r
		}
	}
	switch {
	case req.Key == apiVersionsKey:
		return s.serveApiVersions(req)
	case !api.Served.Contains(req.Version) && api.Unserved != nil:
		return api.Unserved(req)
	case !api.Served.Contains(req.Version):
		h := header{key: req.Key, version: req.Version, corr: req.CorrelationID, client: req.ClientID}
		return s.reject(&pending{}, req.Conn, &h, fmt.Errorf("%w: served %d-%d", errUnsupportedVersion, api.Served.Min, api.Served.Max)).resp
	}
	return s.handler.Handle(ctx, req)
}

// complete runs a deferred answer and settles what it returns.
func (s *Server) complete(ctx context.Context, p *pending, ci *ConnInfo) {
	fn := p.resp.later
	r := func() (r Response) {
		defer func() {
			if v := recover(); v != nil {
				r = s.handlerError(ci, p.key, p.version, p.corr, fmt.Errorf("%w: panic in deferred response: %v", errHandler, v), debug.Stack())
			}
		}()
		return fn(ctx)
	}()
	if r.kind == kindDefer {
		r = s.handlerError(ci, p.key, p.version, p.corr, fmt.Errorf("%w: a deferred response returned Defer", errHandler), nil)
	}
	p.resp = s.settle(p, ci, r)
}

// settle checks a final answer against the request and the Handler's
// contract: a reply of the request's key (its version set to the
// request's), dropped for an acks=0 Produce; nothing only for an acks=0
// Produce; or a close.
func (s *Server) settle(p *pending, ci *ConnInfo, r Response) Response {
	bug := func(format string, args ...any) Response {
		return s.handlerError(ci, p.key, p.version, p.corr, fmt.Errorf("%w: "+format, append([]any{errHandler}, args...)...), nil)
	}
	switch r.kind {
	case kindReply:
		switch {
		case r.body == nil:
			return bug("Reply with a nil body")
		case r.body.Key() != p.key:
			return bug("Reply with a %s body", apiKeyName(r.body.Key()))
		case p.noReply:
			return NoResponse()
		}
		r.body.SetVersion(p.version)
		return r
	case kindNone:
		if !p.noReply {
			return bug("NoResponse to a request that expects a response")
		}
		return r
	case kindClose:
		return r
	}
	return bug("the zero Response")
}

// reject logs bad input and answers with a close. The warning is
// throttled (s.rejects): one client looping on bad frames must not flood
// the log; the bad-input counter still counts every one.
func (s *Server) reject(p *pending, ci *ConnInfo, h *header, err error) *pending {
	ok, suppressed := s.rejects.Note(time.Now())
	s.stats.badInput.Add(1) // after Note: a counted rejection has been throttled
	if ok {
		attrs := append(connAttrs(ci, h), slog.Any("err", err))
		if suppressed > 0 {
			attrs = append(attrs, slog.Int64("suppressed_since_last", suppressed))
		}
		s.log.LogAttrs(context.Background(), slog.LevelWarn, "wire: closing connection on bad request", attrs...)
	}
	p.resp = Response{kind: kindClose, reason: err, logged: true}
	return p
}

// handlerError logs a broken Handler contract once and answers with a
// close.
func (s *Server) handlerError(ci *ConnInfo, key, version int16, corr int32, err error, stack []byte) Response {
	s.stats.handlerErrors.Add(1)
	h := header{key: key, version: version, corr: corr}
	attrs := append(connAttrs(ci, &h), slog.Any("err", err))
	if stack != nil {
		attrs = append(attrs, slog.String("stack", string(stack)))
	}
	s.log.LogAttrs(context.Background(), slog.LevelError, "wire: closing connection on handler error", attrs...)
	return Response{kind: kindClose, reason: err, logged: true}
}

// connAttrs describes a connection (and a request header, if any) for a log
// line.
func connAttrs(ci *ConnInfo, h *header) []slog.Attr {
	var attrs []slog.Attr
	if ci != nil {
		attrs = append(attrs, slog.Uint64("conn", ci.ID))
		if ci.Remote != nil {
			attrs = append(attrs, slog.String("remote", ci.Remote.String()))
		}
	}
	if h != nil {
		attrs = append(attrs,
			slog.String("api", apiKeyName(h.key)), slog.Int("key", int(h.key)), slog.Int("version", int(h.version)),
			slog.Int("correlation_id", int(h.corr)), slog.String("client_id", h.client))
	}
	return attrs
}
