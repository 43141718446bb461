package notifications

import (
	"fmt"
	"strings"
)

// Message is what a user is told about one event, in one language: Title is the e-mail subject
// and the inbox heading, Body the text of every channel.
type Message struct {
	Category Category
	Language Language
	Title    string
	Body     string
}

// facts are the values a template may use, each already cleaned or formatted by us.
type facts struct {
	Name       string // the person's first name (cleaned); "" when unknown
	Amount     string // ETB, formatted from santim
	Fee        string
	Gross, Net string
	Deductions string
	Period     string // cleaned
	Reference  string // cleaned id of the thing the event is about
	Note       string // a reviewer's note to the applicant (cleaned); "" when none
	Outcome    string // a dispute's decision (a key of disputeOutcomes); "" when none
	Date       string // a date we set (YYYY-MM-DD, UTC); "" when none
}

// template is one event's message in one language.
type template struct{ title, body string }

// templates: event kind → language → text. Placeholders are {name}, {amount}, {fee}, {gross},
// {deductions}, {net}, {period}, {reference}, {note}, {outcome} and {date}; every value is ours
// or cleaned.
var templates = map[string]map[Language]template{
	kindEwaDisbursed: {
		English: {"Your early wage access has been paid", "Hello {name}, {amount} ETB of your earned wages was sent to your account (fee {fee} ETB). Reference {reference}."},
		Amharic: {"የደመወዝ ቅድሚያ ክፍያዎ ተልኳል", "ሰላም {name}፣ ከሠሩበት ደመወዝ {amount} ብር ወደ ሂሳብዎ ተልኳል (የአገልግሎት ክፍያ {fee} ብር)። መለያ ቁጥር {reference}።"},
	},
	kindLoanDisbursed: {
		English: {"Your loan has been disbursed", "Hello {name}, your loan of {amount} ETB was sent to your account. Reference {reference}."},
		Amharic: {"ብድርዎ ተለቋል", "ሰላም {name}፣ {amount} ብር ብድርዎ ወደ ሂሳብዎ ተልኳል። መለያ ቁጥር {reference}።"},
	},
	kindPayslip: {
		English: {"Your pay for {period}", "Hello {name}, your pay for {period}: gross {gross} ETB, deductions {deductions} ETB, net {net} ETB."},
		Amharic: {"የ{period} ደመወዝዎ", "ሰላም {name}፣ የ{period} ደመወዝዎ፦ ጠቅላላ {gross} ብር፣ ተቀናሽ {deductions} ብር፣ የተጣራ {net} ብር።"},
	},
	kindKycRequested: {
		English: {"We received your identity verification", "Hello {name}, we received your identity documents and will review them soon."},
		Amharic: {"የማንነት ማረጋገጫዎ ደርሶናል", "ሰላም {name}፣ የማንነት ሰነዶችዎ ደርሰውናል፤ በቅርቡ እንገመግማቸዋለን።"},
	},
	kindKycApproved: {
		English: {"Your identity is verified", "Hello {name}, your identity verification was approved."},
		Amharic: {"ማንነትዎ ተረጋግጧል", "ሰላም {name}፣ የማንነት ማረጋገጫዎ ጸድቋል።"},
	},
	kindKycRejected: {
		English: {"Your identity verification was not approved", "Hello {name}, your identity verification was not approved. Reason: {note}"},
		Amharic: {"የማንነት ማረጋገጫዎ አልጸደቀም", "ሰላም {name}፣ የማንነት ማረጋገጫዎ አልጸደቀም። ምክንያት፦ {note}"},
	},
	kindKycMoreInfo: {
		English: {"More information is needed to verify your identity", "Hello {name}, we need more information to verify your identity: {note}"},
		Amharic: {"ለማንነት ማረጋገጫዎ ተጨማሪ መረጃ ያስፈልጋል", "ሰላም {name}፣ ማንነትዎን ለማረጋገጥ ተጨማሪ መረጃ ያስፈልገናል፦ {note}"},
	},
	kindTest: {
		English: {"Wagerail test message", "This is a test message from Wagerail: notifications sent this way reach you. Reference {reference}."},
		Amharic: {"የዋጀሬል የሙከራ መልእክት", "ይህ ከዋጀሬል የተላከ የሙከራ መልእክት ነው፤ በዚህ መንገድ የሚላኩ ማሳወቂያዎች ይደርሱዎታል። መለያ ቁጥር {reference}።"},
	},
	kindKycExpired: {
		English: {"Your identity verification has expired", "Hello {name}, your identity verification has expired. Submit your documents again to keep using wage access and loans."},
		Amharic: {"የማንነት ማረጋገጫዎ ጊዜው አልፏል", "ሰላም {name}፣ የማንነት ማረጋገጫዎ ጊዜው አልፏል። አገልግሎቶቹን ለመቀጠል ሰነዶችዎን እንደገና ያስገቡ።"},
	},
	kindDisputeOpened: {
		English: {"A dispute about your money is open", "Hello {name}, dispute {reference} over {amount} ETB on your account is open. It will be decided by {date}; we will tell you the outcome."},
		Amharic: {"ገንዘብዎን የሚመለከት አቤቱታ ተከፍቷል", "ሰላም {name}፣ በሂሳብዎ ላይ ያለው የ{amount} ብር አቤቱታ {reference} ተከፍቷል። እስከ {date} ድረስ ውሳኔ ያገኛል፤ ውጤቱን እናሳውቅዎታለን።"},
	},
	kindDisputeDecided: {
		English: {"Your dispute has been decided", "Hello {name}, your dispute {reference} over {amount} ETB has been decided: {outcome}"},
		Amharic: {"በአቤቱታዎ ላይ ውሳኔ ተሰጥቷል", "ሰላም {name}፣ በ{amount} ብር ላይ ያቀረቡት አቤቱታ {reference} ውሳኔ አግኝቷል፦ {outcome}"},
	},
}

// disputeOutcomes: a dispute's decision, as its customer is told it, by language.
var disputeOutcomes = map[Language]map[string]string{
	English: {
		"NO_ACTION":  "we found no error, so nothing changes.",
		"ADJUSTMENT": "we corrected your balance by an adjustment.",
		"REVERSAL":   "the transaction was reversed.",
		"CHARGEBACK": "we have passed it to the partner bank, which will reply.",
	},
	Amharic: {
		"NO_ACTION":  "ስህተት አላገኘንም፤ ምንም ለውጥ የለም።",
		"ADJUSTMENT": "ሂሳብዎን በማስተካከያ አርመናል።",
		"REVERSAL":   "ግብይቱ ተመልሷል።",
		"CHARGEBACK": "ጉዳዩን ለአጋር ባንኩ አስተላልፈናል፤ ባንኩ ምላሽ ይሰጣል።",
	},
}

// fallbackName is the greeting's name when the person's is unknown.
var fallbackName = map[Language]string{English: "there", Amharic: "ደንበኛችን"}

// render writes kind's message in lang (English when lang has no template).
func render(kind string, cat Category, lang Language, f facts) (Message, error) {
	byLang, ok := templates[kind]
	if !ok {
		return Message{}, fmt.Errorf("notifications: no template for %s", kind)
	}
	if !lang.Valid() {
		lang = English
	}
	t := byLang[lang]
	if f.Name == "" {
		f.Name = fallbackName[lang]
	}
	if f.Note == "" {
		f.Note = "-"
	}
	r := strings.NewReplacer("{name}", f.Name, "{amount}", f.Amount, "{fee}", f.Fee, "{gross}", f.Gross,
		"{deductions}", f.Deductions, "{net}", f.Net, "{period}", f.Period, "{reference}", f.Reference, "{note}", f.Note,
		"{outcome}", disputeOutcomes[lang][f.Outcome], "{date}", f.Date)
	return Message{Category: cat, Language: lang, Title: r.Replace(t.title), Body: r.Replace(t.body)}, nil
}

// etb formats santim as birr with two decimals and thousands separators: 123456 → "1,234.56".
func etb(santim int64) string {
	neg := santim < 0
	u := uint64(santim)
	if neg {
		u = uint64(-santim)
	}
	whole, frac := u/100, u%100
	s := fmt.Sprintf("%d", whole)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	fmt.Fprintf(&b, ".%02d", frac)
	return b.String()
}
