package dev.tandem.transaction;

/**
 * The decision log refused a decision because another instance of the app has claimed this
 * instance's lease (this instance was taken for dead: its lease expired, for example during a long
 * pause or a partition from the coordinator). Fatal for the instance: the claimant is resolving
 * its transactions and has fenced its producers; the transaction aborts, and the instance must be
 * restarted (it then takes a new lease once the claimant has released the old one).
 *
 * @since 0.1.0
 */
public class LeaseClaimedException extends DecisionLogException {

	private static final long serialVersionUID = 1L;

	public LeaseClaimedException(String message) {
		super(message);
	}

}
