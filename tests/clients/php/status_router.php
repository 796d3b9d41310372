<?php
// Harness instrumentation: the `php -S` router, which runs the unmodified sample (SAMPLE, beside this file's copy in
// <build>/php-push/<kind>/) and appends the status the sample answered with to $HARNESS_STATUS_LOG. `php -S` itself logs no
// status for requests a router script answers, and applies no auto_prepend_file to a router.
register_shutdown_function(function () {
    $line = 'HARNESS-STATUS ' . http_response_code() . ' ' . $_SERVER['REQUEST_METHOD'] . ' ' . $_SERVER['REQUEST_URI']
        . ' headers=' . implode(',', array_keys(getallheaders())) . "\n";
    file_put_contents(getenv('HARNESS_STATUS_LOG'), $line, FILE_APPEND | LOCK_EX);
});
require getenv('HARNESS_SAMPLE');
