function __playerctl_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __playerctl_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __playerctl_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __playerctl_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __playerctl_parse_tokens -S
    set -l unparsed_tokens (__playerctl_tokens -pc)
    switch $unparsed_tokens[1]
    case 'playerctl'
        __playerctl_parse_subcommand 0 'socket=' 'h/help'
        switch $unparsed_tokens[1]
        case 'play'
            __playerctl_parse_subcommand -r 1 'socket=' 'search=+' 'album=' 'artist=' 'h/help'
        case 'pause'
            __playerctl_parse_subcommand 0 'socket=' 'for=' 'h/help'
        case 'play-pause'
            __playerctl_parse_subcommand 0 'socket=' 'h/help'
        case 'stop'
            __playerctl_parse_subcommand 0 'socket=' 'after=' 'at-end' 'cancel-timer' 'h/help'
        case 'next'
            __playerctl_parse_subcommand 0 'socket=' 'h/help'
        case 'previous'
            __playerctl_parse_subcommand 0 'socket=' 'h/help'
        case 'seek'
            __playerctl_parse_subcommand -r 1 'socket=' 'h/help'
        case 'position'
            __playerctl_parse_subcommand 0 'socket=' 'seconds' 'h/help'
        case 'volume'
            __playerctl_parse_subcommand -r 1 'socket=' 'h/help'
        case 'status'
            __playerctl_parse_subcommand 0 'socket=' 'json' 'follow' 'h/help'
        case 'metadata'
            __playerctl_parse_subcommand 0 'socket=' 'json' 'h/help'
        case 'queue'
            __playerctl_parse_subcommand 0 'h/help'
            switch $unparsed_tokens[1]
            case 'list'
                __playerctl_parse_subcommand 0 'socket=' 'h/help'
            case 'add'
                __playerctl_parse_subcommand -r 1 'socket=' 'search=+' 'album=' 'artist=' 'h/help'
            case 'clear'
                __playerctl_parse_subcommand 0 'socket=' 'h/help'
            case 'remove'
                __playerctl_parse_subcommand -r 1 'socket=' 'h/help'
            case 'move'
                __playerctl_parse_subcommand 2 'socket=' 'h/help'
            end
        case 'repeat'
            __playerctl_parse_subcommand 1 'socket=' 'h/help'
        case 'random'
            __playerctl_parse_subcommand 1 'socket=' 'h/help'
        case 'single'
            __playerctl_parse_subcommand 1 'socket=' 'h/help'
        case 'consume'
            __playerctl_parse_subcommand 1 'socket=' 'h/help'
        case 'wait'
            __playerctl_parse_subcommand 1 'socket=' 'timeout=' 'h/help'
        case 'update'
            __playerctl_parse_subcommand 1 'socket=' 'rescan' 'wait' 'h/help'
        case 'search'
            __playerctl_parse_subcommand -r 1 'socket=' 'artist=' 'album=' 'title=' 'limit=' 'json' 'h/help'
        case 'list'
            __playerctl_parse_subcommand 0 'h/help'
            switch $unparsed_tokens[1]
            case 'artists'
                __playerctl_parse_subcommand 0 'socket=' 'json' 'h/help'
            case 'albums'
                __playerctl_parse_subcommand 1 'socket=' 'json' 'h/help'
            case 'genres'
                __playerctl_parse_subcommand 0 'socket=' 'json' 'h/help'
            end
        case 'outputs'
            __playerctl_parse_subcommand 2 'socket=' 'json' 'h/help'
        case 'replaygain'
            __playerctl_parse_subcommand 1 'socket=' 'h/help'
        case 'help'
            __playerctl_parse_subcommand -r 1 
        end
    end
end

function __playerctl_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __playerctl_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __playerctl_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __playerctl_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__playerctl_tokens -p)
    if test -z "$(__playerctl_tokens -t)"
        set -l index (count (__playerctl_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'playerctl' -f
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'play' -d 'Play files, directories or .m3u playlists, replacing the queue; alone, start or resume.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'pause' -d 'Pause; with --for, resume by itself later.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'play-pause' -d 'Pause when playing, play when paused or stopped.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'stop' -d 'Stop now, or set the sleep timer with --after or --at-end.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'next' -d 'Play the next song in the queue.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'previous' -d 'Play the previous song in the queue.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'seek' -d 'Seek in the current song: to a time, or by +/- a time from where it is.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'position' -d 'Print how far into the current song playback is.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'volume' -d 'Print the volume, set it (0-100), or change it by +N / -N.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'status' -d 'Print what is playing and the player\'s options.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'metadata' -d 'Print the current song\'s tags and file as key: value lines.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'queue' -d 'Show or change the play queue (positions count from 1).'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'repeat' -d 'Start the queue again after its end: on, off, or toggle.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'random' -d 'Play the queue in a shuffled order: on, off, or toggle.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'single' -d 'Stop after each song (or repeat it): on, off, oneshot, or toggle.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'consume' -d 'Remove each song from the queue once played: on, off, or toggle.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'wait' -d 'Wait until playerd answers, or until the player is playing, paused or stopped.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'update' -d 'Update the library from the music directory (all of it, or PATH in it).'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'search' -d 'Search the library: songs with every word in some tag (any case).'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'list' -d 'List the library\'s artists, albums or genres.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'outputs' -d 'List the outputs, or switch one on, off or over.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'replaygain' -d 'Print or set the ReplayGain mode: off, track, album, or auto (album unless random is on).'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl play" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl play" -ge 1' -F
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl play"' -l 'search' -d 'Songs of the library with every word in some tag (any case).' -rfka ''
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl play" album' -l 'album' -d 'An album of the library, in track order (its name, any case).' -rfka ''
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl play" artist' -l 'artist' -d 'With --album, the album\'s artist; with --search, text the Artist tag must contain.' -rfka ''
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl play" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl pause" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl pause" for' -l 'for' -d 'Resume after this long.' -rfka ''
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl pause" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl play-pause" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl play-pause" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl stop" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl stop" after' -l 'after' -d 'Stop after this long.' -rfka ''
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl stop" at-end' -l 'at-end' -d 'Stop at the end of the current song.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl stop" cancel-timer' -l 'cancel-timer' -d 'Cancel the sleep timer.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl stop" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl next" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl next" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl previous" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl previous" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl seek" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl seek" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl position" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl position" seconds' -l 'seconds' -d 'Print seconds with three decimals instead of m:ss.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl position" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl volume" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl volume" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl status" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl status" json' -l 'json' -d 'Print one JSON object.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl status" follow' -l 'follow' -d 'Keep one line up to date until interrupted.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl status" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl metadata" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl metadata" json' -l 'json' -d 'Print one JSON object (empty when there is no current song).'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl metadata" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl queue" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl queue" -eq 1' -fa 'list' -d 'List the queue, one song a line; > marks the current song.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl queue" -eq 1' -fa 'add' -d 'Add files, directories or .m3u playlists to the end of the queue; or songs of the library.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl queue" -eq 1' -fa 'clear' -d 'Empty the queue (playback stops).'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl queue" -eq 1' -fa 'remove' -d 'Remove songs by their positions.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl queue" -eq 1' -fa 'move' -d 'Move the song at FROM to position TO.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl queue list" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl queue list" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl queue add" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl queue add" -ge 1' -F
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl queue add"' -l 'search' -d 'Songs of the library with every word in some tag (any case).' -rfka ''
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl queue add" album' -l 'album' -d 'An album of the library, in track order (its name, any case).' -rfka ''
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl queue add" artist' -l 'artist' -d 'With --album, the album\'s artist; with --search, text the Artist tag must contain.' -rfka ''
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl queue add" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl queue clear" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl queue clear" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl queue remove" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl queue remove" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl queue move" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl queue move" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl repeat" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl repeat" -eq 1' -fka 'on off'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl repeat" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl random" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl random" -eq 1' -fka 'on off'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl random" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl single" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl single" -eq 1' -fka 'on off oneshot'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl single" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl consume" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl consume" -eq 1' -fka 'on off'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl consume" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl wait" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl wait" -eq 1' -fka 'ready play pause stop playing paused stopped'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl wait" timeout' -l 'timeout' -d 'Give up after this long.' -rfka ''
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl wait" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl update" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl update" rescan' -l 'rescan' -d 'Read every file again, also those that have not changed.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl update" wait' -l 'wait' -d 'Wait until the update is over, then print a summary.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl update" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl search" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl search" artist' -l 'artist' -d 'Text the Artist tag must contain.' -rfka ''
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl search" album' -l 'album' -d 'Text the Album tag must contain.' -rfka ''
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl search" title' -l 'title' -d 'Text the Title tag must contain.' -rfka ''
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl search" limit' -l 'limit' -d 'Print at most this many songs.' -rfka ''
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl search" json' -l 'json' -d 'Print a JSON array of songs.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl search" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl list" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl list" -eq 1' -fa 'artists' -d 'List the artists, one a line.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl list" -eq 1' -fa 'albums' -d 'List the albums with their year, under their artists; or one artist\'s albums.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl list" -eq 1' -fa 'genres' -d 'List the genres, one a line.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl list artists" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl list artists" json' -l 'json' -d 'Print a JSON array of names.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl list artists" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl list albums" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl list albums" json' -l 'json' -d 'Print a JSON array of {artist, album, year} objects.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl list albums" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl list genres" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl list genres" json' -l 'json' -d 'Print a JSON array of names.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl list genres" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl outputs" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl outputs" -eq 1' -fka 'enable disable toggle'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl outputs" json' -l 'json' -d 'Print one JSON object per output, one a line.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl outputs" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl replaygain" socket' -l 'socket' -d 'The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).' -rF
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_positional "playerctl replaygain" -eq 1' -fka 'off track album auto'
complete -c 'playerctl' -n '__playerctl_should_offer_completions_for_flags_or_options "playerctl replaygain" h help' -s 'h' -l 'help' -d 'Show help information.'
