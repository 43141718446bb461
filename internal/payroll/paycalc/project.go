package paycalc

// Projection is what the next run will pay on the current inputs, and how much more it could
// recover.
type Projection struct {
	// Entry is the calculator's entry on the input, unchanged: the statutory deductions, the court
	// orders, the instalments and every other deduction due.
	Entry Entry
	// NetSantim is the net pay the run would pay (Entry.NetSantim).
	NetSantim int64
	// RecoverableSantim is how much more the run could deduct within the protection policy (the
	// share and the minimum net) after every deduction in the input, without displacing any of
	// them: an EWA recovery (or any protected deduction) of at most this amount added to the input
	// is taken in full and changes nothing else but the net, which falls by exactly that much.
	// Early wage access limits an advance (principal + fee) to it.
	RecoverableSantim int64
}

// Project runs the calculator on in (the employee's current salary, mandates, instalments, EWA
// recoveries and carried-forward amounts, for the period of the next run) and returns the net and
// the room left. Errors are Calculate's.
func Project(in Input) (Projection, error) {
	e, err := calculate(&in)
	if err != nil {
		return Projection{}, err
	}
	return Projection{Entry: e, NetSantim: e.NetSantim, RecoverableSantim: e.RecoverableSantim}, nil
}
