package membership

import "errors"

// Sentinel errors; callers test them with errors.Is.
var (
	// ErrInvalidConfig reports a Config (or a profile name) that Start
	// cannot use.
	ErrInvalidConfig = errors.New("membership: invalid config")
	// ErrMetaTooLarge reports a Meta whose encoding does not fit
	// memberlist.MetaMaxSize.
	ErrMetaTooLarge = errors.New("membership: node meta too large")
	// ErrBadMeta reports node meta that does not decode (a peer that is
	// not a weir node, or a corrupt packet).
	ErrBadMeta = errors.New("membership: undecodable node meta")
	// ErrStopped is returned by SetMeta and Leave after Stop.
	ErrStopped = errors.New("membership: stopped")
	// ErrLeft is returned by SetMeta after Leave.
	ErrLeft = errors.New("membership: left the cluster")
)
