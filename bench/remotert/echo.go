package remotert

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"github.com/vmihailenco/msgpack/v5"
	"google.golang.org/protobuf/types/known/anypb"
)

// Control is the measured message: about the size of a raft heartbeat or
// a leader notice (ids, epochs, an offset and a short payload; 60-odd
// bytes in msgpack).
type Control struct {
	Seq         uint64 `msgpack:"s"`
	From        int32  `msgpack:"f"`
	Term        uint64 `msgpack:"t"`
	LeaderEpoch int32  `msgpack:"e"`
	Offset      int64  `msgpack:"o"`
	Payload     []byte `msgpack:"p"`
}

// typeURL names Control inside the envelope.
const typeURL = "weir.bench/remotert.Control"

// EchoName is the echo actor's name in its actor system.
const EchoName = "echo"

// wrap encodes c in the envelope weir uses across nodes.
func wrap(c *Control) (*anypb.Any, error) {
	b, err := msgpack.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode control: %w", err)
	}
	return &anypb.Any{TypeUrl: typeURL, Value: b}, nil
}

// unwrap decodes the envelope.
func unwrap(msg any) (*Control, error) {
	a, ok := msg.(*anypb.Any)
	if !ok {
		return nil, fmt.Errorf("unexpected message %T", msg)
	}
	if a.TypeUrl != typeURL {
		return nil, fmt.Errorf("unexpected type %q", a.TypeUrl)
	}
	var c Control
	if err := msgpack.Unmarshal(a.Value, &c); err != nil {
		return nil, fmt.Errorf("decode control: %w", err)
	}
	return &c, nil
}

// echo answers each Control with one carrying the same Seq, decoding and
// encoding it as a real handler would.
type echo struct{}

func (echo) Receive(ctx actor.Context) {
	msg := ctx.Message()
	if _, ok := msg.(*anypb.Any); !ok {
		return // lifecycle messages
	}
	c, err := unwrap(msg)
	if err != nil {
		return
	}
	c.Term++
	reply, err := wrap(c)
	if err != nil {
		return
	}
	ctx.Respond(reply)
}

// newSystem is an actor system as weir's cmd creates one (its own logger,
// no global state), with remote started on 127.0.0.1 and a free port when
// withRemote is set.
func newSystem(withRemote bool) (*actor.ActorSystem, *remote.Remote) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return quiet }))
	if !withRemote {
		return system, nil
	}
	r := remote.NewRemote(system, remote.Configure("127.0.0.1", 0))
	r.Start()
	return system, r
}

// spawnEcho starts the echo actor under EchoName.
func spawnEcho(system *actor.ActorSystem) (*actor.PID, error) {
	pid, err := system.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return echo{} }), EchoName)
	if err != nil {
		return nil, fmt.Errorf("spawn echo: %w", err)
	}
	return pid, nil
}

// request sends one Control and waits for its echo.
func request(system *actor.ActorSystem, to *actor.PID, seq uint64, payload []byte, timeout time.Duration) error {
	msg, err := wrap(&Control{Seq: seq, From: 1, Term: 7, LeaderEpoch: 3, Offset: int64(seq) * 100, Payload: payload})
	if err != nil {
		return err
	}
	res, err := system.Root.RequestFuture(to, msg, timeout).Result()
	if err != nil {
		return fmt.Errorf("request %d: %w", seq, err)
	}
	c, err := unwrap(res)
	if err != nil {
		return err
	}
	if c.Seq != seq || c.Term != 8 {
		return fmt.Errorf("reply %d/%d to request %d", c.Seq, c.Term, seq)
	}
	return nil
}
