package metadata

// FenceExpired returns the brokers whose sessions expired at nowMs
// (Sessions.Expired) and the records that fence them: for each, in node
// order, FenceBrokerRecords against img plus the records of the brokers
// before it, so the batch applies as one; each is fenced, taken out of
// every ISR (the last member too; where an ISR falls below
// min.insync.replicas, the controller's default for topics without an
// override, the replicas taken out join its ELR) and leaves the
// partitions it led leaderless. The records fit one operation (OpBudget): a broker whose
// fence does not fit what is left gets only the partition changes that
// fit, without its BrokerFencedRecord, and is not in fenced; it stays
// unfenced and expired, so the next call goes on with what is left. The
// brokers after it wait for the next call too. Without Sessions (a single
// node) nothing expires.
func (c *Controller) FenceExpired(img *Image, nowMs int64) (fenced []BrokerRef, recs []Record) {
	if c.Sessions == nil {
		return nil, nil
	}
	var budget OpBudget
	cur := img
	for _, ref := range c.Sessions.Expired(img, nowMs) {
		br, err := cur.currentBroker(ref.NodeID, ref.Epoch)
		if err != nil || br.Fenced {
			continue
		}
		rs, complete := fenceWithin(cur, br, &budget, c.minISRDefault())
		next, err := dryRun(cur, rs)
		if err != nil {
			// The fence records are built from cur and always apply;
			// should one not, the broker waits rather than the batch
			// failing.
			break
		}
		cur = next
		recs = append(recs, rs...)
		if !complete {
			break
		}
		fenced = append(fenced, ref)
	}
	return fenced, recs
}

// fenceWithin returns the records that fence br, a registration of img,
// within what budget has left, and whether they are the whole fence: the
// batch of FenceBrokerRecords if it fits, else as many of its partition
// changes as fit, without the BrokerFencedRecord, so that the broker stays
// unfenced and a later operation fences it with the changes left. minISR
// is min.insync.replicas for topics without an override.
func fenceWithin(img *Image, br Broker, budget *OpBudget, minISR int) ([]Record, bool) {
	return within(img.fenceRecords(br, minISR), budget)
}

// within returns all if it fits what budget has left, and true; else as
// many of its partition changes as fit, without any broker record (the
// fence or registration they come with waits for the operation that
// completes them), and false. A later operation rebuilds the records from
// the image, so the changes applied are not made twice.
func within(all []Record, budget *OpBudget) ([]Record, bool) {
	if budget.Add(all) {
		return all, true
	}
	var part []Record
	for _, r := range all {
		if _, ok := r.(PartitionChangeRecord); !ok {
			continue
		}
		if !budget.Add([]Record{r}) {
			break
		}
		part = append(part, r)
	}
	return part, false
}
