package transport

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
	"google.golang.org/protobuf/types/known/anypb"
)

// typeURLPrefix starts the TypeUrl of every weir envelope.
const typeURLPrefix = "weir/"

// Type names one message type that may cross nodes: Name is stable on the
// wire (e.g. "quorum.Message"), New returns a new zero value to decode into
// (a pointer to struct).
type Type struct {
	// Name is the type's name on the wire; it must never change once nodes
	// run with it.
	Name string
	// New returns a new zero value of the type, a pointer to struct.
	New func() any
}

// codec maps registered types to their wire names and back.
type codec struct {
	byURL  map[string]Type         // "weir/<name>" -> type
	byType map[reflect.Type]string // Go type -> "weir/<name>"
}

// newCodec checks types (names set and unique, New returning distinct
// pointers to structs) and indexes them.
func newCodec(types []Type) (*codec, error) {
	c := &codec{byURL: make(map[string]Type, len(types)), byType: make(map[reflect.Type]string, len(types))}
	for _, ty := range types {
		if ty.Name == "" || ty.New == nil {
			return nil, fmt.Errorf("transport: type %q: a name and a New function are required", ty.Name)
		}
		v := ty.New()
		rt := reflect.TypeOf(v)
		if rt == nil || rt.Kind() != reflect.Pointer || rt.Elem().Kind() != reflect.Struct || reflect.ValueOf(v).IsNil() {
			return nil, fmt.Errorf("transport: type %q: New returns %T, want a non-nil pointer to struct", ty.Name, v)
		}
		url := typeURLPrefix + ty.Name
		if _, dup := c.byURL[url]; dup {
			return nil, fmt.Errorf("transport: type name %q registered twice", ty.Name)
		}
		if other, dup := c.byType[rt]; dup {
			return nil, fmt.Errorf("transport: %v registered as %q and %q", rt, strings.TrimPrefix(other, typeURLPrefix), ty.Name)
		}
		c.byURL[url] = ty
		c.byType[rt] = url
	}
	return c, nil
}

// encode wraps msg, a pointer of a registered type, in an envelope.
func (c *codec) encode(msg any) (a *anypb.Any, err error) {
	url, ok := c.byType[reflect.TypeOf(msg)]
	if !ok {
		return nil, fmt.Errorf("transport: encode %T: %w", msg, ErrUnknownType)
	}
	defer func() {
		if r := recover(); r != nil {
			a, err = nil, fmt.Errorf("transport: encode %T: panic: %v", msg, r)
		}
	}()
	b, err := msgpack.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("transport: encode %T: %w", msg, err)
	}
	return &anypb.Any{TypeUrl: url, Value: b}, nil
}

// decode unwraps an envelope into a new value of its registered type.
func (c *codec) decode(a *anypb.Any) (msg any, err error) {
	if a == nil {
		return nil, errors.New("transport: decode a nil envelope")
	}
	ty, ok := c.byURL[a.TypeUrl]
	if !ok {
		return nil, fmt.Errorf("transport: decode %q: %w", a.TypeUrl, ErrUnknownType)
	}
	defer func() {
		if r := recover(); r != nil {
			msg, err = nil, fmt.Errorf("transport: decode %q: panic: %v", a.TypeUrl, r)
		}
	}()
	v := ty.New()
	if err := msgpack.Unmarshal(a.Value, v); err != nil {
		return nil, fmt.Errorf("transport: decode %q: %w", a.TypeUrl, err)
	}
	return v, nil
}
