"""Channel data sources beside the geometric generator (:mod:`scigen.wireless.synthetic`) and quadriga-lib
(:mod:`scigen.wireless.quadriga`): 3GPP TR 38.901 channels from Sionna (:mod:`scigen.wireless.data.sionna`)."""
