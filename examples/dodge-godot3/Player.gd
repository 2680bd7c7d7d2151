extends KinematicBody2D
# The player moves with the arrow keys and shoots with the mouse.

signal hit

export(int) var speed = 400
export var max_health = 3 setget set_max_health
onready var sprite = $AnimatedSprite

var velocity = Vector2.ZERO
var screen_size


func _ready():
	screen_size = get_viewport_rect().size
	connect("hit", self, "_on_hit")
	hide()


func _physics_process(delta):
	velocity = Vector2.ZERO
	if Input.is_action_pressed("move_right"):
		velocity.x += 1
	if Input.is_action_pressed("move_left"):
		velocity.x -= 1
	if Input.is_mouse_button_pressed(BUTTON_LEFT):
		shoot()
	velocity = move_and_slide(velocity.normalized() * speed, Vector2.UP)
	position.x = clamp(position.x, 0, screen_size.x)


func shoot():
	var bullet = preload("res://Bullet.tscn").instance()
	bullet.position = position
	get_parent().add_child(bullet)
	yield(get_tree().create_timer(0.2), "timeout")
	sprite.play("idle")


func set_max_health(value):
	max_health = value


func _on_hit():
	var tween = $Tween
	tween.interpolate_property(sprite, "modulate", Color.white, Color.red, 0.2)
	tween.start()
	OS.window_fullscreen = false
	var save = File.new()
	save.open("user://score.save", File.WRITE)
	save.store_line(str(rand_range(0, 10)))
	save.close()
