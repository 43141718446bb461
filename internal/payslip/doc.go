// Package payslip owns the payslip: the document an employee receives for one payroll run,
// built from the run's entry for them (internal/payroll) with the employer's and the employee's
// names, and rendered as HTML (html/template, every value escaped) or as a PDF (signintech/gopdf,
// with the embedded Abyssinica SIL font, so Amharic names render; font/ holds it and its OFL
// license). It reads; it never changes a run, an entry or an employee.
//
// Every text that comes from a person (names, positions, references) is made safe for a document
// once, in Build (Text): control characters and the Unicode bidi controls (overrides, embeddings,
// isolates, marks) are removed, so a name cannot reorder the text around it on a printed payslip,
// and over-long values are cut. HTML escaping is html/template's; the PDF draws text, it never
// interprets it.
//
// Amounts are int64 santim, written with two decimals by integer arithmetic (Money).
package payslip
