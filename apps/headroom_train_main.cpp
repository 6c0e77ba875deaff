// headroom-train: the LibTorch side of `headroom` (cli/training_handover.hpp). It runs every
// subcommand, the data-side ones included (`run` preprocesses before it trains); users normally
// reach it through `headroom`, which hands training subcommands over with the same arguments.
// The app and its error handling live in train_cli/training_app.hpp, shared with the Python
// module's stage functions.
#include "headroom/train_cli/training_app.hpp"

int main(int argc, char** argv) { return headroom::cli::run_training_app(argc, argv); }
