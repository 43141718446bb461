package personname

// Ethiopic (Ge'ez) to Latin, as Ethiopian names are usually written in English documents
// (Abebe, Bekele, Tesfaye, Haile), which is how they appear on sanctions lists: not a scholarly
// transliteration. The Unicode block lays the syllabary out in rows of eight: a consonant's seven
// vowel orders (ä, u, i, a, e, ə, o) and its labialised -wa form. The sixth order (a bare
// consonant or ə) is written without a vowel; the similarity score absorbs the missing i or e
// ("grma" vs "Girma").

// ethiopicRows maps a row's first code point to its consonant.
var ethiopicRows = map[rune]string{
	0x1200: "h", 0x1208: "l", 0x1210: "h", 0x1218: "m", 0x1220: "s", 0x1228: "r", 0x1230: "s",
	0x1238: "sh", 0x1240: "k", 0x1250: "k", 0x1260: "b", 0x1268: "v", 0x1270: "t", 0x1278: "ch",
	0x1280: "h", 0x1290: "n", 0x1298: "ny", 0x12A0: "", 0x12A8: "k", 0x12B8: "h", 0x12C8: "w",
	0x12D0: "", 0x12D8: "z", 0x12E0: "zh", 0x12E8: "y", 0x12F0: "d", 0x12F8: "d", 0x1300: "j",
	0x1308: "g", 0x1318: "ng", 0x1320: "t", 0x1328: "ch", 0x1330: "p", 0x1338: "ts", 0x1340: "ts",
	0x1348: "f", 0x1350: "p",
}

// ethiopicLabialRows are the rows of labialised consonants (qʷ, kʷ, …), laid out
// wä, -, wi, wa, we, wə, -, -.
var ethiopicLabialRows = map[rune]string{
	0x1248: "k", 0x1258: "k", 0x1288: "h", 0x12B0: "k", 0x12C0: "h", 0x1310: "g",
}

var ethiopicVowels = [8]string{"e", "u", "i", "a", "e", "", "o", "wa"}

var ethiopicLabialVowels = [8]string{"we", "", "wi", "wa", "we", "w", "", ""}

// ethiopic transliterates one Ethiopic character: its Latin spelling (" " for the word space and
// other punctuation, "" for characters that carry no letter) and true, or false for any other
// character.
func ethiopic(r rune) (string, bool) {
	switch {
	case r >= 0x1360 && r <= 0x1368:
		return " ", true // ፡ word space, ። full stop, ፣ comma, …
	case r >= 0x1369 && r <= 0x137C:
		return " ", true // Ethiopic numerals: never part of a name's letters
	case r >= 0x135D && r <= 0x135F:
		return "", true // combining marks
	case r == 0x1358:
		return "mya", true
	case r == 0x1359:
		return "rya", true
	case r == 0x135A:
		return "fya", true
	case r < 0x1200 || r > 0x1357:
		return "", false
	}
	row, order := r&^7, int(r&7)
	if c, ok := ethiopicLabialRows[row]; ok {
		return c + ethiopicLabialVowels[order], true
	}
	c, ok := ethiopicRows[row]
	if !ok {
		return "", true
	}
	switch {
	case c == "" && order == 0:
		return "a", true // አ, ዐ: the vowel carrier's first order is written a (Abebe, Alemu)
	case c == "" && order == 5:
		return "e", true // እ: Eskinder
	case c == "h" && order == 0:
		return "ha", true // ሀ, ሐ, ኀ: Haile, Hagos
	}
	return c + ethiopicVowels[order], true
}
