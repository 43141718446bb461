package activities

import "time"

// Clock is the one clock of the record steps (an activity group's Now field): the instant a step
// stamps on the rows it writes and decides time rules by. nil is time.Now; a test sets a fixed or
// advancing one.
type Clock func() time.Time

// Now is the clock's instant.
func (c Clock) Now() time.Time {
	if c != nil {
		return c()
	}
	return time.Now()
}
