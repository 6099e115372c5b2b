package cli

// Suggest returns the candidate closest to name, for a "did you mean"
// hint, or "" when none is close enough to be a likely typo: within an
// edit distance of a third of the name's length (at least 1), or one that
// starts with name.
func Suggest(name string, candidates []string) string {
	best, bestDist := "", -1
	limit := max(1, len(name)/3)
	for _, c := range candidates {
		d := editDistance(name, c)
		if d > limit && !(len(name) >= 2 && len(c) > len(name) && c[:len(name)] == name) {
			continue
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, counting an
// exchange of two adjacent characters as one edit.
func editDistance(a, b string) int {
	// Three rows of the dynamic-programming table are enough for the
	// adjacent-transposition case.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
