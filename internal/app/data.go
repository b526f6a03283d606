package app

// Data is where a command's deployment lives: Config is its configuration
// file ("" means the defaults), Dir its data folder ("" means
// $QUIVER_DATA, else $XDG_DATA_HOME/quiver, else ~/.local/share/quiver).
// A command reads Config before it touches Dir, and creates Dir only after
// every check it can make without it.
type Data struct{ Config, Dir string }

// flags is d as the opener takes it.
func (d Data) flags() dataFlags { return dataFlags{config: d.Config, data: d.Dir} }
