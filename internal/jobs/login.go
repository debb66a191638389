package jobs

import (
	"os"
	"os/user"
	"strconv"
)

// Login is who runs this process, as the journal records it for planning, approving, applying and
// resolving: the account name the OS gives this process's uid. It is never read from $USER or $LOGNAME,
// which anyone sets to anything (a container run with --user 4242 and USER=bob would otherwise approve
// as bob what uid 4242 planned as alice). A uid the OS has no name for is "uid:4242": the same uid is
// the same login under any $USER.
func Login() string { return LoginOf(os.Getuid(), user.LookupId) }

// LoginOf is the login of uid as lookup (user.LookupId in production; the cgo build asks the C library,
// so NSS and LDAP accounts have their names) names it. Neither lookup path falls back to $USER, unlike
// user.Current without cgo. Any failure to find a name gives "uid:N", never a guess.
func LoginOf(uid int, lookup func(uid string) (*user.User, error)) string {
	id := strconv.Itoa(uid)
	u, err := lookup(id)
	if err != nil || u == nil || u.Username == "" || u.Uid != "" && u.Uid != id {
		return "uid:" + id // no name, or the lookup failed: the uid is all the OS says
	}
	return u.Username
}
