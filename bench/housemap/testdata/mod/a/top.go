// Package a is housemap's fixture: top uses mid, mid uses low, low uses mid (a cycle), and
// leaf is used by low.
package a

func Top() int { return mid() }
