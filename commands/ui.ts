import {Flags} from '@oclif/core'
import {PlacematCommand} from '../src/cli/placemat-command.js'
import {mapPage} from '../src/cli/services/map-page.js'

export default class Ui extends PlacematCommand {
  static summary = "The map of the datacenter: print the address of the daemon's page, its token in the fragment; --open opens it."
  static printed = {keys: ['url', 'opened']}
  static description = `The daemon serves one page, /placemat/ui/: the layout as nested boxes
(room, row, rack, host), coloured by how many more of a flavor of its
catalog fit (daemon start --flavors) or by the use of a class; a domain's
numbers, hosts and placement groups on hover; what if a host, rack, row or
room were lost, side by side with the cloud as it is. The page's files need
no token; every number it shows is asked with one, as any API call is.

Prints the address of the daemon this command talks to (--url, PLACEMAT_URL,
the local daemon, a cloud's catalog), its base path kept, with the token in
the URL's fragment (#token=...): a browser never sends a fragment, and the
page moves the token to the tab's session storage and clears it from the
address bar. Without a token the page asks for one. --open also opens the
address where a browser is (xdg-open; open on macOS). A --db file has no
page: start a daemon on it.`

  static examples = [
    '<%= config.bin %> ui',
    '<%= config.bin %> ui --open',
    '<%= config.bin %> ui --url https://cloud.example/placement --token "$TOKEN"',
  ]

  static flags = {
    open: Flags.boolean({description: 'open the page in a browser (xdg-open, or open on macOS) where there is one'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Ui)
    const page = await mapPage(await this.endpoint(), {open: flags.open})
    if (!this.textOutput) return this.outputRecord({...page})
    this.log(page.url)
    if (page.opened === null) this.warn('no browser to open it with here (no xdg-open on the PATH): open the address above')
  }
}
