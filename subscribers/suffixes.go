package subscribers

import (
	"context"
	"database/sql"
)

// A substring needle is looked up in subscriber_suffixes (migration 000010),
// which holds every suffix of each subscriber's email, phone and name, cut to
// suffixKeep characters. Every occurrence of a needle begins a suffix, so the
// rows holding it are the suffixes from the needle up to the needle followed
// by 0xff (a byte no UTF-8 text holds, so above every continuation): one
// range of the b-tree, as long as the matches, whatever the table's size.
// Candidates are still checked with instr() by the search's filters, which
// keeps the match exact for needles longer than suffixKeep.

// The fields subscriber_suffixes indexes, as its field column numbers them.
const (
	fieldEmail = 1
	fieldPhone = 2
	fieldName  = 3
)

// suffixKeep is how many characters of each suffix the index keeps.
const suffixKeep = 32

// candidates are the rows that may hold one needle: a range of the suffix
// index, with the number of index entries in it counted up to driveLimit+1.
type candidates struct {
	args     []any // field, lower and upper bound of the range
	estimate int
}

// candidateRange is the range condition on subscriber_suffixes; its
// arguments are candidates.args.
const candidateRange = "field = ? AND suffix >= ? AND suffix < ?"

// candidatesFrom joins the candidates of one needle to their rows; CROSS
// JOIN keeps the suffix range outermost. Its arguments come first.
const candidatesFrom = "(SELECT DISTINCT seq FROM subscriber_suffixes WHERE " + candidateRange +
	") f CROSS JOIN subscribers s ON s.seq = f.seq"

// candidatesIn is the filter form of the same: a row whose seq is in the range.
const candidatesIn = "s.seq IN (SELECT seq FROM subscriber_suffixes WHERE " + candidateRange + ")"

// needle is a substring filter the suffix index can look up: three
// characters or more, without NUL.
type needle struct {
	field int
	text  string
}

// rarest returns the candidates of the needle with the fewest, counted in
// tx; nil when there are no needles.
func (s *Store) rarest(ctx context.Context, tx *sql.Tx, needles []needle) (*candidates, error) {
	var match *candidates
	for _, n := range needles {
		c, err := s.findCandidates(ctx, tx, n.field, n.text)
		if err != nil {
			return nil, err
		}
		if match == nil || c.estimate < match.estimate {
			match = &c
		}
	}
	return match, nil
}

// findCandidates returns the candidates of needle in field, counted in tx.
func (s *Store) findCandidates(ctx context.Context, tx *sql.Tx, field int, needle string) (candidates, error) {
	key := needle
	if r := []rune(needle); len(r) > suffixKeep {
		key = string(r[:suffixKeep])
	}
	c := candidates{args: []any{field, key, key + "\xff"}}
	err := s.db.TxQueryRow(ctx, tx, `SELECT count(*) FROM (SELECT 1 FROM subscriber_suffixes WHERE `+
		candidateRange+` LIMIT ?) AS c`, append(c.args, driveLimit+1)...).Scan(&c.estimate)
	return c, err
}
