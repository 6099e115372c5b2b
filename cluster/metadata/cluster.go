package metadata

func (b *Builder) applyClusterCreated(r ClusterCreatedRecord) error {
	if b.img.clusterID != "" {
		return invalid("cluster id already set to %s", b.img.clusterID)
	}
	if err := ValidateClusterID(r.ClusterID); err != nil {
		return invalid("%v", err)
	}
	b.img.clusterID = r.ClusterID
	return nil
}

func (b *Builder) applyControllerChanged(r ControllerChangedRecord) error {
	if r.ControllerID < 0 {
		return invalid("controller id %d is negative", r.ControllerID)
	}
	if r.Term <= b.img.controllerEpoch {
		return invalid("term %d is not after the current term %d", r.Term, b.img.controllerEpoch)
	}
	b.img.controllerID = r.ControllerID
	b.img.controllerEpoch = r.Term
	return nil
}
