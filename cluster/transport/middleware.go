package transport

import (
	"log/slog"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/types/known/anypb"
)

// Middleware is the receiver middleware weir's actors are spawned with: it
// decodes an envelope of a registered type into the typed struct before
// Receive sees it (the message keeps its sender). Envelopes of unknown
// types are logged once per type and dropped, as are envelopes that do not
// decode. Other messages pass through untouched, so only weir's own actors
// are affected.
func (t *Transport) Middleware() actor.ReceiverMiddleware {
	return func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(ctx actor.ReceiverContext, env *actor.MessageEnvelope) {
			a, ok := env.Message.(*anypb.Any)
			if !ok || !strings.HasPrefix(a.TypeUrl, typeURLPrefix) {
				next(ctx, env)
				return
			}
			msg, err := t.codec.decode(a)
			if err != nil {
				t.logOnce(a.TypeUrl, "transport: dropped an envelope that does not decode",
					slog.String("type", a.TypeUrl), slog.Any("sender", env.Sender), slog.Any("error", err))
				return
			}
			next(ctx, &actor.MessageEnvelope{Header: env.Header, Message: msg, Sender: env.Sender})
		}
	}
}

// Props returns props for producer with Middleware installed.
func (t *Transport) Props(producer actor.Producer) *actor.Props {
	return actor.PropsFromProducer(producer, actor.WithReceiverMiddleware(t.Middleware()))
}

// logOnce logs a warning the first time it is called with key.
func (t *Transport) logOnce(key, msg string, attrs ...any) {
	if _, seen := t.logged.LoadOrStore(key, struct{}{}); !seen {
		t.log.Warn(msg, attrs...)
	}
}
