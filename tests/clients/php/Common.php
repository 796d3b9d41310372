<?php
// What the SDK's Samples/Common.php does (autoload the SDK and Guzzle), for the build of
// shared/clients/php/build.sh (beside the checkout): AliyunMNS\ PSR-4 from <build>/sdk/AliyunMNS, Guzzle from Debian.

$build = getenv('MNS_PHP_SDK_BUILD') ?: ((getenv('XDG_CACHE_HOME') ?: getenv('HOME') . '/.cache') . '/mns-sdks/php');
if (!is_file("$build/sdk/AliyunMNS/Client.php")) {
    fwrite(STDERR, "AliyunMNS SDK not found under $build/sdk: run tests/clients/run.sh (it runs shared/clients/php/build.sh)\n");
    exit(2);
}
require_once '/usr/share/php/GuzzleHttp/autoload.php';
spl_autoload_register(function ($class) use ($build) {
    $prefix = 'AliyunMNS\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = "$build/sdk/AliyunMNS/" . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require_once $file;
    }
});
