package metadata

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ElectLeadersRequest carries a node's leader proposals for leaderless
// partitions (docs/DESIGN.md "Leader election"): the proposals of all its
// partition actors batched, possibly thousands. The controller decides
// them in order, as ElectLeader, each against its image plus the records
// of the proposals before it, so for two proposals of one partition the
// first valid one wins and the later one is stale.
type ElectLeadersRequest struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Proposals []LeaderProposal
}

// ElectLeadersResult answers an ElectLeadersRequest: one error per
// proposal, in request order. The codes:
//
//   - none: the candidate leads once the batch applied;
//   - ELECTION_NOT_NEEDED: the partition has a leader; not to retry;
//   - LEADER_NOT_AVAILABLE (retriable): the proposal was made against a
//     stale partition epoch (the partition changed since, maybe by an
//     earlier proposal of the same request); propose again from a newer
//     image if the partition is still leaderless there;
//   - REQUEST_TIMED_OUT (retriable): not decided: past the bounds of one
//     operation (OpBudget), or the batch did not apply; propose again;
//   - INELIGIBLE_REPLICA: the candidate may not lead (fenced, not a
//     candidate of the first election the partition is open to, an
//     unclean election not allowed or not needed: Candidates);
//   - STALE_BROKER_EPOCH, BROKER_ID_NOT_REGISTERED: the candidate's
//     registration is not the current one;
//   - UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION: no such topic id, or
//     no such partition of it.
type ElectLeadersResult struct {
	_msgpack struct{} `msgpack:",as_array"`
	Errors   []APIError
}

func (*ElectLeadersRequest) kind() requestKind { return kindElectLeaders }
func (*ElectLeadersResult) kind() requestKind  { return kindElectLeaders }

// Refused implements Request.
func (r *ElectLeadersRequest) Refused(e APIError) Result {
	out := &ElectLeadersResult{Errors: make([]APIError, len(r.Proposals))}
	for i := range out.Errors {
		out.Errors[i] = e
	}
	return out
}

// Fail implements Result.
func (r *ElectLeadersResult) Fail(e APIError) {
	for i := range r.Errors {
		if !r.Errors[i].Failed() {
			r.Errors[i] = e
		}
	}
}

// notDecided is the error of an item left for a later operation.
func notDecided() APIError {
	return apiErr(kerr.RequestTimedOut, "Not decided by this request: one operation holds at most %d records; retry.", MaxRecordsPerOp)
}

// electLeaders decides an ElectLeadersRequest (see its result's codes).
// Unclean proposals take unclean.leader.election.enable from the topic's
// override, else the controller's broker config; the ELR rules take
// min.insync.replicas likewise.
func (c *Controller) electLeaders(img *Image, r *ElectLeadersRequest) (*ElectLeadersResult, []Record) {
	res := &ElectLeadersResult{Errors: make([]APIError, len(r.Proposals))}
	uncleanDefault := c.Config.Bool("unclean.leader.election.enable")
	minISR := c.minISRDefault()
	b := NewBuilder(img)
	off := max(img.Offset(), 0)
	var recs []Record
	var budget OpBudget
	full := false
	for i, prop := range r.Proposals {
		if full {
			res.Errors[i] = notDecided()
			continue
		}
		// b.img is the image plus the records of the proposals before.
		rec, err := electLeader(&b.img, prop, uncleanDefault, minISR)
		if err == nil && !budget.Add([]Record{rec}) {
			full = true
			res.Errors[i] = notDecided()
			continue
		}
		if err == nil {
			err = b.Apply(rec, off)
		}
		if err != nil {
			res.Errors[i] = errorIn(kmsg.ElectLeaders, err)
			continue
		}
		recs = append(recs, rec)
	}
	return res, recs
}
