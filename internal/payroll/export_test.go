package payroll

// DueCourtOrderRemitsPaged is dueCourtOrderRemits with a page size a test can make small.
var DueCourtOrderRemitsPaged = dueCourtOrderRemits
