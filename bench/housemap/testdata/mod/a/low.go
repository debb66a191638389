package a

func low() int {
	if false {
		return mid()
	}
	var t T
	return t.leaf()
}
