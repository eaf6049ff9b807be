package game

import (
	"unicode/utf8"

	"github.com/trustelem/zxcvbn"
	"github.com/trustelem/zxcvbn/match"
)

// The password check of registration: zxcvbn (Dropbox's estimator, in
// trustelem's Go port, which OWASP's Authentication Cheat Sheet suggests)
// estimates how many guesses a cracker needs, from 30,000 common passwords,
// names, English words, keyboard patterns, repeats, sequences, dates and
// l33t spellings, and from the words of the player's name and the game's.
const (
	// MinPasswordScore is the zxcvbn score a new password needs: 3,
	// "safely unguessable", at least 10^8 guesses, which holds against an
	// offline attack on a stolen copy of the bcrypt hashes, not only
	// against online guessing, which the login throttle slows anyway.
	MinPasswordScore = 3

	// maxEstimatedBytes is how much of a password the estimate reads:
	// its cost grows steeply with the length of l33t-looking input (up to
	// half a second for 72 crafted bytes, 65 ms for 40, on the project's
	// machine when idle: BenchmarkCheckPassword), and a password whose
	// first 40 bytes are hard to guess is.
	maxEstimatedBytes = 40
)

// gameWords count against every password, as the player's name does.
var gameWords = []string{"State Secrets", "statesecrets", "secrets"}

// CheckPassword returns an EINVALID error, saying why and what to do
// instead, if password (already 8..72 bytes: ValidatePassword) would be
// quick to guess for a player called name (MinPasswordScore). It costs
// from 0.5 ms of CPU for a common password to 3.5 ms for a passphrase of
// 30 characters, and up to about 65 ms for crafted input (a bcrypt hash
// at the default cost is 70): a server on one loop calls it off the loop,
// with the hash. Any goroutine may call it.
func CheckPassword(password, name string) error {
	est := password
	for len(est) > maxEstimatedBytes {
		_, size := utf8.DecodeLastRuneInString(est)
		est = est[:len(est)-size]
	}
	r := zxcvbn.PasswordStrength(est, append([]string{name}, gameWords...))
	if r.Score >= MinPasswordScore {
		return nil
	}
	return Errorf(EINVALID, "This password is too easy to guess: %s. Choose a longer one: "+
		"three or four words that have nothing to do with each other, or with you, make a good password.", weakness(r.Sequence))
}

// weakness says what makes a password easy to guess: the pattern of its
// longest match that is not plain guessing. It names the pattern, never
// the part of the password that matched.
func weakness(seq []*match.Match) string {
	var worst *match.Match
	for _, m := range seq {
		if m.Pattern != "bruteforce" && (worst == nil || m.J-m.I > worst.J-worst.I) {
			worst = m
		}
	}
	if worst == nil {
		return "it is short and plain"
	}
	switch worst.Pattern {
	case "dictionary":
		switch worst.DictionaryName {
		case "passwords":
			return "it is, or is built on, one of the most common passwords"
		case "user_inputs":
			return "it is built on your code name or the game's words"
		}
		return "it is built on a common word or name"
	case "spatial":
		return "it is a pattern of neighbouring keys, such as qwerty"
	case "repeat":
		return "it repeats itself, such as aaaa or abcabc"
	case "sequence":
		return "it is a sequence, such as 1234 or abcd"
	case "date", "regex":
		return "it is built on a date or a year"
	}
	return "it follows a common pattern"
}
